package awsface

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// awsMaxUserData is EC2's limit on user data: 16 KB before base64.
const awsMaxUserData = 16384

// awsMaxVersions is EC2's limit of versions per launch template.
const awsMaxVersions = 10000

var ltNameRE = regexp.MustCompile(`^[a-zA-Z0-9().\-/_]{3,128}$`)

// awsTemplate is a launch template, kept in the face's data.
type awsTemplate struct {
	ID         string                         `json:"id"`
	Name       string                         `json:"name"`
	CreateTime time.Time                      `json:"createTime"`
	CreatedBy  string                         `json:"createdBy"`
	Default    int64                          `json:"default"`
	Latest     int64                          `json:"latest"`
	Tags       []awsapi.Tag                   `json:"tags,omitempty"`
	Versions   map[string]*awsTemplateVersion `json:"versions"`
}

type awsTemplateVersion struct {
	Number      int64                     `json:"number"`
	Description string                    `json:"description,omitempty"`
	CreateTime  time.Time                 `json:"createTime"`
	Data        awsapi.LaunchTemplateData `json:"data"`
}

func (t *awsTemplate) version(n int64) *awsTemplateVersion {
	return t.Versions[strconv.FormatInt(n, 10)]
}

// resolve returns the version number a version string names: $Latest,
// $Default (also for ""), or a number; 0 when there is no such version.
func (t *awsTemplate) resolve(v string) int64 {
	switch v {
	case "$Latest":
		return t.Latest
	case "$Default", "":
		return t.Default
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || t.version(n) == nil {
		return 0
	}
	return n
}

func (t *awsTemplate) wire() awsapi.LaunchTemplate {
	return awsapi.LaunchTemplate{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, CreateTime: AWSTime(t.CreateTime),
		CreatedBy: t.CreatedBy, DefaultVersionNumber: t.Default, LatestVersionNumber: t.Latest, Tags: t.Tags}
}

func (t *awsTemplate) wireVersion(v *awsTemplateVersion) awsapi.LaunchTemplateVersion {
	return awsapi.LaunchTemplateVersion{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, VersionNumber: v.Number,
		VersionDescription: v.Description, CreateTime: AWSTime(v.CreateTime), CreatedBy: t.CreatedBy,
		DefaultVersion: v.Number == t.Default, LaunchTemplateData: v.Data}
}

// templates returns the launch templates of a scope, by ID.
func (h *awsHandler) templates(scope string) map[string]*awsTemplate {
	out := map[string]*awsTemplate{}
	for _, raw := range h.env.Cloud.FaceRecords(AWSFaceName, templateKey(scope, "")) {
		t := core.DecodePayload[awsTemplate](raw)
		out[t.ID] = &t
	}
	return out
}

// AWSLaunchTemplate finds a launch template of account's region of the AWS
// face of c by ID (else by name), as DescribeLaunchTemplates shows it;
// false when there is none.
func AWSLaunchTemplate(c *core.Cloud, account, region, id, name string) (awsapi.LaunchTemplate, bool) {
	t := findTemplate(c, AWSScope(account, region), id, name)
	if t == nil {
		return awsapi.LaunchTemplate{}, false
	}
	return t.wire(), true
}

// findTemplate reads a launch template of scope by ID, else by name; nil
// when there is none.
func findTemplate(c *core.Cloud, scope, id, name string) *awsTemplate {
	if id = templateID(c, scope, id, name); id == "" {
		return nil
	}
	raw := c.FaceRecord(AWSFaceName, templateKey(scope, id))
	if raw == nil {
		return nil
	}
	t := core.DecodePayload[awsTemplate](raw)
	return &t
}

// templateID is id, else the ID of scope's template named name (its name
// index); "" when neither names one.
func templateID(c *core.Cloud, scope, id, name string) string {
	if id != "" || name == "" {
		return id
	}
	return core.FaceRecordAs[string](c, AWSFaceName, templateNameKey(scope, name))
}

// findTemplateIn finds a template by ID or name in m.
func findTemplateIn(m map[string]*awsTemplate, id, name string) *awsTemplate {
	if id != "" {
		return m[id]
	}
	for _, t := range m {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// changeTemplate changes the launch template the request names
// (LaunchTemplateId, else LaunchTemplateName) with fn, atomically; a
// missing template is EC2's error for it, and fn's error leaves the
// template unchanged.
func (h *awsHandler) changeTemplate(req *awsRequest, fn func(t *awsTemplate) error) error {
	id, name := req.form.Get("LaunchTemplateId"), req.form.Get("LaunchTemplateName")
	scope := AWSScope(req.account, req.region)
	tid := templateID(h.env.Cloud, scope, id, name)
	if tid == "" {
		return templateNotFound(id, name)
	}
	_, err := h.env.Cloud.UpdateFaceRecord(AWSFaceName, templateKey(scope, tid), func(old json.RawMessage) (json.RawMessage, error) {
		if old == nil {
			return nil, templateNotFound(id, name)
		}
		return core.EditPayload(fn)(old)
	})
	return err
}

// awsError is an error answered in the request's service's shape.
type awsError struct {
	status        int
	code, message string
}

func (e *awsError) Error() string { return e.code + ": " + e.message }

func ec2Err(code, format string, args ...any) *awsError {
	return &awsError{status: http.StatusBadRequest, code: code, message: fmt.Sprintf(format, args...)}
}

func (h *awsHandler) writeAWSError(w http.ResponseWriter, req *awsRequest, err error) {
	if e, ok := err.(*awsError); ok {
		h.writeError(w, req, e.status, e.code, e.message)
		return
	}
	h.writeCloudError(w, req, err)
}

// templateNotFound is EC2's error for a template named by ID or name.
func templateNotFound(id, name string) *awsError {
	if id != "" {
		if !awsIDRE("lt").MatchString(id) {
			return ec2Err(awsapi.CodeLTIDMalformed, "The specified ID for the launch template (%s) is malformed.", id)
		}
		return ec2Err(awsapi.CodeLTIDNotFound, "The specified launch template, with template ID %s, does not exist.", id)
	}
	return ec2Err(awsapi.CodeLTNameNotFound, "The specified launch template, with template name %s, does not exist.", name)
}

// parseLTData reads LaunchTemplateData.* over base: fields the request
// sets replace base's (CreateLaunchTemplateVersion's SourceVersion).
func parseLTData(form url.Values, base awsapi.LaunchTemplateData) (awsapi.LaunchTemplateData, error) {
	const p = "LaunchTemplateData."
	d := base
	str := func(dst *string, k string) {
		if qHas(form, p+k) {
			*dst = form.Get(p + k)
		}
	}
	str(&d.ImageID, "ImageId")
	str(&d.InstanceType, "InstanceType")
	str(&d.KeyName, "KeyName")
	str(&d.UserData, "UserData")
	if qHas(form, p+"IamInstanceProfile") {
		d.IamInstanceProfile = &awsapi.IamInstanceProfile{Arn: form.Get(p + "IamInstanceProfile.Arn"), Name: form.Get(p + "IamInstanceProfile.Name")}
	}
	if qHas(form, p+"BlockDeviceMapping") {
		d.BlockDeviceMappings = nil
		for _, n := range qIndices(form, p+"BlockDeviceMapping") {
			k := p + "BlockDeviceMapping." + strconv.Itoa(n) + "."
			m := awsapi.BlockDeviceMapping{DeviceName: form.Get(k + "DeviceName")}
			if qHas(form, k+"Ebs") {
				size, _ := qInt(form, k+"Ebs.VolumeSize")
				iops, _ := qInt(form, k+"Ebs.Iops")
				tp, _ := qInt(form, k+"Ebs.Throughput")
				m.Ebs = &awsapi.Ebs{VolumeType: form.Get(k + "Ebs.VolumeType"), Encrypted: qBool(form, k+"Ebs.Encrypted"),
					DeleteOnTermination: qBool(form, k+"Ebs.DeleteOnTermination")}
				for _, x := range []struct {
					v   *int64
					dst *int64
				}{{size, &m.Ebs.VolumeSize}, {iops, &m.Ebs.Iops}, {tp, &m.Ebs.Throughput}} {
					if x.v != nil {
						*x.dst = *x.v
					}
				}
			}
			d.BlockDeviceMappings = append(d.BlockDeviceMappings, m)
		}
	}
	if qHas(form, p+"NetworkInterface") {
		d.NetworkInterfaces = nil
		for _, n := range qIndices(form, p+"NetworkInterface") {
			k := p + "NetworkInterface." + strconv.Itoa(n) + "."
			idx, _ := qInt(form, k+"DeviceIndex")
			d.NetworkInterfaces = append(d.NetworkInterfaces, awsapi.NetworkInterface{
				DeviceIndex: idx, SubnetID: form.Get(k + "SubnetId"), AssociatePublicIPAddress: qBool(form, k+"AssociatePublicIpAddress"),
				Groups: qList(form, k+"SecurityGroupId"), DeleteOnTermination: qBool(form, k+"DeleteOnTermination"),
			})
		}
	}
	if qHas(form, p+"SecurityGroupId") {
		d.SecurityGroupIDs = qList(form, p+"SecurityGroupId")
	}
	if qHas(form, p+"InstanceMarketOptions") {
		k := p + "InstanceMarketOptions."
		d.InstanceMarketOptions = &awsapi.InstanceMarketOptions{MarketType: form.Get(k + "MarketType")}
		if qHas(form, k+"SpotOptions") {
			d.InstanceMarketOptions.SpotOptions = &awsapi.SpotOptions{MaxPrice: form.Get(k + "SpotOptions.MaxPrice"), SpotInstanceType: form.Get(k + "SpotOptions.SpotInstanceType")}
		}
	}
	if qHas(form, p+"MetadataOptions") {
		k := p + "MetadataOptions."
		hop, _ := qInt(form, k+"HttpPutResponseHopLimit")
		d.MetadataOptions = &awsapi.MetadataOptions{HTTPTokens: form.Get(k + "HttpTokens"), HTTPEndpoint: form.Get(k + "HttpEndpoint"),
			InstanceMetadataTags: form.Get(k + "InstanceMetadataTags"), State: "applied"}
		if hop != nil {
			d.MetadataOptions.HTTPPutResponseHopLimit = *hop
		}
	}
	if qHas(form, p+"TagSpecification") {
		d.TagSpecifications = parseTagSpecs(form, p+"TagSpecification")
	}
	if d.ImageID != "" && !awsIDRE("ami").MatchString(d.ImageID) {
		return d, ec2Err(awsapi.CodeInvalidAMIIDMalformed, "Invalid id: %q (expecting \"ami-...\")", d.ImageID)
	}
	if d.UserData != "" {
		raw, err := base64.StdEncoding.DecodeString(d.UserData)
		if err != nil {
			return d, ec2Err(awsapi.CodeInvalidUserDataLimit, "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > awsMaxUserData {
			return d, ec2Err(awsapi.CodeInvalidParameterValue, "User data is limited to %d bytes", awsMaxUserData)
		}
	}
	return d, nil
}

func parseTagSpecs(form url.Values, prefix string) []awsapi.TagSpecification {
	var out []awsapi.TagSpecification
	for _, n := range qIndices(form, prefix) {
		k := prefix + "." + strconv.Itoa(n) + "."
		ts := awsapi.TagSpecification{ResourceType: form.Get(k + "ResourceType")}
		for _, m := range qIndices(form, k+"Tag") {
			t := k + "Tag." + strconv.Itoa(m) + "."
			ts.Tags = append(ts.Tags, awsapi.Tag{Key: form.Get(t + "Key"), Value: form.Get(t + "Value")})
		}
		out = append(out, ts)
	}
	return out
}

// createLaunchTemplate serves CreateLaunchTemplate.
func (h *awsHandler) createLaunchTemplate(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	name := req.form.Get("LaunchTemplateName")
	switch {
	case name == "":
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingParameter, "The request must contain the parameter LaunchTemplateName")
		return
	case !ltNameRE.MatchString(name):
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeLTNameMalformed,
			"A launch template name must be between 3 and 128 characters, and may contain letters, numbers, and the following characters: - ( ) . / _.'")
		return
	case !qHas(req.form, "LaunchTemplateData"):
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingParameter, "The request must contain the parameter LaunchTemplateData")
		return
	}
	data, err := parseLTData(req.form, awsapi.LaunchTemplateData{})
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	now := h.env.Cloud.Clock().Now().UTC()
	var tags []awsapi.Tag
	for _, ts := range parseTagSpecs(req.form, "TagSpecification") {
		if ts.ResourceType == "launch-template" {
			tags = append(tags, ts.Tags...)
		}
	}
	scope := AWSScope(req.account, req.region)
	t := &awsTemplate{
		ID: "lt-" + AWSHex(17, "lt", scope, name, now.String()), Name: name, CreateTime: now,
		CreatedBy: "arn:aws:iam::" + req.account + ":root", Default: 1, Latest: 1, Tags: tags,
		Versions: map[string]*awsTemplateVersion{"1": {Number: 1, Description: req.form.Get("VersionDescription"), CreateTime: now, Data: data}},
	}
	// The name is claimed first: of two creates of one name, one wins.
	_, err = h.env.Cloud.UpdateFaceRecord(AWSFaceName, templateNameKey(scope, name), func(old json.RawMessage) (json.RawMessage, error) {
		if old != nil {
			return nil, ec2Err(awsapi.CodeLTNameAlreadyExists, "Launch template name already in use.")
		}
		return json.Marshal(t.ID)
	})
	if err == nil {
		_, err = h.env.Cloud.UpdateFaceRecord(AWSFaceName, templateKey(scope, t.ID), core.ReplacePayload(t))
	}
	h.reply(w, req, &awsapi.CreateLaunchTemplateResponse{LaunchTemplate: t.wire()}, err)
}

// createLaunchTemplateVersion serves CreateLaunchTemplateVersion: a new
// latest version, from SourceVersion's data with the request's fields
// replacing its. Auto Scaling groups launching $Latest take it up.
func (h *awsHandler) createLaunchTemplateVersion(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	if req.form.Get("LaunchTemplateId") == "" && req.form.Get("LaunchTemplateName") == "" {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingParameter, "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
		return
	}
	now := h.env.Cloud.Clock().Now().UTC()
	var out awsapi.LaunchTemplateVersion
	var tid string
	err := h.changeTemplate(req, func(t *awsTemplate) error {
		var base awsapi.LaunchTemplateData
		if sv := req.form.Get("SourceVersion"); sv != "" {
			n := t.resolve(sv)
			if n == 0 {
				return ec2Err(awsapi.CodeLTIDVersionNotFound, "Could not find launch template version %s for launch template ID %s", sv, t.ID)
			}
			base = t.version(n).Data
		}
		if len(t.Versions) >= awsMaxVersions {
			return ec2Err(awsapi.CodeLTMaxVersionsExceeded, "You've reached the limit of %d versions for launch template %s.", awsMaxVersions, t.ID)
		}
		data, err := parseLTData(req.form, base)
		if err != nil {
			return err
		}
		t.Latest++
		v := &awsTemplateVersion{Number: t.Latest, Description: req.form.Get("VersionDescription"), CreateTime: now, Data: data}
		t.Versions[strconv.FormatInt(v.Number, 10)] = v
		out, tid = t.wireVersion(v), t.ID
		return nil
	})
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.refreshTemplateGroups(req, tid)
	h.writeResult(w, req, &awsapi.CreateLaunchTemplateVersionResponse{LaunchTemplateVersion: out})
}

// describeLaunchTemplates serves DescribeLaunchTemplates: by
// LaunchTemplateId.N, LaunchTemplateName.N and the filters
// launch-template-name, tag:<key> and tag-key; paged.
func (h *awsHandler) describeLaunchTemplates(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	scope := AWSScope(req.account, req.region)
	ids, names := qList(req.form, "LaunchTemplateId"), qList(req.form, "LaunchTemplateName")
	f := ec2Filters(req)
	var list []*awsTemplate
	for _, id := range ids {
		t := findTemplate(h.env.Cloud, scope, id, "")
		if t == nil {
			h.writeAWSError(w, req, templateNotFound(id, ""))
			return
		}
		list = append(list, t)
	}
	for _, n := range names {
		t := findTemplate(h.env.Cloud, scope, "", n)
		if t == nil {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeLTNameNotFound, "At least one of the launch templates specified in the request does not exist.")
			return
		}
		list = append(list, t)
	}
	if len(ids) == 0 && len(names) == 0 {
		for _, t := range h.templates(scope) {
			list = append(list, t)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].CreateTime.Before(list[j].CreateTime) || list[i].CreateTime.Equal(list[j].CreateTime) && list[i].ID < list[j].ID
	})
	var match []awsapi.LaunchTemplate
	for _, t := range list {
		if f.match("launch-template-name", t.Name) && f.matchTags(t.Tags) {
			match = append(match, t.wire())
		}
	}
	page, next, err := ec2Page(req, match, 1, 200)
	h.reply(w, req, &awsapi.DescribeLaunchTemplatesResponse{LaunchTemplates: page, NextToken: next}, err)
}

// ec2Page pages list by the request's MaxResults (lo..hi) and NextToken.
func ec2Page[T any](req *awsRequest, list []T, lo, hi int64) ([]T, string, error) {
	max, ok := qInt(req.form, "MaxResults")
	if !ok || max != nil && (*max < lo || *max > hi) {
		return nil, "", ec2Err(awsapi.CodeInvalidParameterValue, "Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", req.form.Get("MaxResults"), lo, hi)
	}
	off, ok := parsePageToken(req.form.Get("NextToken"), req.action)
	if !ok {
		return nil, "", ec2Err(awsapi.CodeInvalidPaginationToken, "Invalid pagination token")
	}
	limit := len(list)
	if max != nil {
		limit = int(*max)
	}
	out, next := pageOf(list, off, limit, req.action)
	if out == nil {
		out = []T{}
	}
	return out, next, nil
}

// describeLaunchTemplateVersions serves DescribeLaunchTemplateVersions:
// the versions of a template (LaunchTemplateVersion.N: numbers, $Latest,
// $Default; MinVersion, MaxVersion), or without a template the $Latest or
// $Default versions of all; paged.
func (h *awsHandler) describeLaunchTemplateVersions(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	scope := AWSScope(req.account, req.region)
	id, name := req.form.Get("LaunchTemplateId"), req.form.Get("LaunchTemplateName")
	wanted := qList(req.form, "LaunchTemplateVersion")
	var templates []*awsTemplate
	if id != "" || name != "" {
		t := findTemplate(h.env.Cloud, scope, id, name)
		if t == nil {
			h.writeAWSError(w, req, templateNotFound(id, name))
			return
		}
		templates = []*awsTemplate{t}
	} else {
		for _, v := range wanted {
			if v != "$Latest" && v != "$Default" {
				h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingParameter, "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
				return
			}
		}
		for _, t := range h.templates(scope) {
			templates = append(templates, t)
		}
		sort.Slice(templates, func(i, j int) bool { return templates[i].ID < templates[j].ID })
	}
	minV, _ := strconv.ParseInt(req.form.Get("MinVersion"), 10, 64)
	maxV, _ := strconv.ParseInt(req.form.Get("MaxVersion"), 10, 64)
	var out []awsapi.LaunchTemplateVersion
	for _, t := range templates {
		var nums []int64
		if len(wanted) > 0 {
			for _, v := range wanted {
				n := t.resolve(v)
				if n == 0 {
					h.writeError(w, req, http.StatusBadRequest, awsapi.CodeLTIDVersionNotFound,
						fmt.Sprintf("Could not find launch template version %s for launch template ID %s", v, t.ID))
					return
				}
				nums = append(nums, n)
			}
		} else {
			for _, v := range t.Versions {
				if (minV == 0 || v.Number >= minV) && (maxV == 0 || v.Number <= maxV) {
					nums = append(nums, v.Number)
				}
			}
			sort.Slice(nums, func(i, j int) bool { return nums[i] > nums[j] })
		}
		for _, n := range nums {
			out = append(out, t.wireVersion(t.version(n)))
		}
	}
	page, next, err := ec2Page(req, out, 1, 200)
	h.reply(w, req, &awsapi.DescribeLaunchTemplateVersionsResponse{LaunchTemplateVersions: page, NextToken: next}, err)
}

// deleteLaunchTemplateVersions serves DeleteLaunchTemplateVersions: the
// default version is never deleted.
func (h *awsHandler) deleteLaunchTemplateVersions(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	versions := qList(req.form, "LaunchTemplateVersion")
	if len(versions) == 0 || len(versions) > 200 {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidParameterValue, "You must specify between 1 and 200 launch template versions to delete.")
		return
	}
	out := &awsapi.DeleteLaunchTemplateVersionsResponse{}
	err := h.changeTemplate(req, func(t *awsTemplate) error {
		for _, v := range versions {
			n, _ := strconv.ParseInt(v, 10, 64)
			switch {
			case t.version(n) == nil:
				out.Undeleted = append(out.Undeleted, awsapi.UndeletedVersion{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, VersionNumber: n,
					ResponseError: awsapi.ResponseError{Code: "launchTemplateVersionDoesNotExist", Message: "The specified launch template version does not exist."}})
			case n == t.Default:
				out.Undeleted = append(out.Undeleted, awsapi.UndeletedVersion{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, VersionNumber: n,
					ResponseError: awsapi.ResponseError{Code: "unexpectedError", Message: "Cannot delete the default version of a launch template. Set another version as the default, or delete the launch template."}})
			default:
				delete(t.Versions, v)
				out.Deleted = append(out.Deleted, awsapi.DeletedVersion{LaunchTemplateID: t.ID, LaunchTemplateName: t.Name, VersionNumber: n})
			}
		}
		return nil
	})
	h.reply(w, req, out, err)
}

// modifyLaunchTemplate serves ModifyLaunchTemplate (SetDefaultVersion);
// groups launching $Default take the new default up.
func (h *awsHandler) modifyLaunchTemplate(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	var out awsapi.LaunchTemplate
	err := h.changeTemplate(req, func(t *awsTemplate) error {
		if v := req.form.Get("SetDefaultVersion"); v != "" {
			n := t.resolve(v)
			if n == 0 {
				return ec2Err(awsapi.CodeLTIDVersionNotFound, "Could not find launch template version %s for launch template ID %s", v, t.ID)
			}
			t.Default = n
		}
		out = t.wire()
		return nil
	})
	if err != nil {
		h.writeAWSError(w, req, err)
		return
	}
	h.refreshTemplateGroups(req, out.LaunchTemplateID)
	h.writeResult(w, req, &awsapi.CreateLaunchTemplateResponse{LaunchTemplate: out})
}

// deleteLaunchTemplate serves DeleteLaunchTemplate. Groups using it keep
// their instances; they cannot launch from it any more.
func (h *awsHandler) deleteLaunchTemplate(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	var out awsapi.LaunchTemplate
	id, name := req.form.Get("LaunchTemplateId"), req.form.Get("LaunchTemplateName")
	scope := AWSScope(req.account, req.region)
	var err error
	if t := findTemplate(h.env.Cloud, scope, id, name); t == nil {
		err = templateNotFound(id, name)
	} else {
		out = t.wire()
		_, err = h.env.Cloud.UpdateFaceRecord(AWSFaceName, templateKey(scope, t.ID), func(json.RawMessage) (json.RawMessage, error) { return nil, nil })
		if err == nil {
			// The name is free again, unless a new template took it.
			_, err = h.env.Cloud.UpdateFaceRecord(AWSFaceName, templateNameKey(scope, t.Name), func(old json.RawMessage) (json.RawMessage, error) {
				if core.DecodePayload[string](old) != t.ID {
					return old, nil
				}
				return nil, nil
			})
		}
	}
	h.reply(w, req, &awsapi.CreateLaunchTemplateResponse{LaunchTemplate: out}, err)
}

// kubernetesVersionOf is the kubelet version of instances of a template
// version: its AWSTagKubernetesVersion instance tag, else the version in
// the AMI's name, else "".
func kubernetesVersionOf(tags []awsapi.Tag, im *awsImage) string {
	for _, t := range tags {
		if t.Key == AWSTagKubernetesVersion && t.Value != "" {
			if !strings.HasPrefix(t.Value, "v") {
				return "v" + t.Value
			}
			return t.Value
		}
	}
	if im != nil {
		return im.version
	}
	return ""
}
