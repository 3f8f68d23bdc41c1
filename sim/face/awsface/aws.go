package awsface

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// AWSFaceName is the name of the AWS face: its groups' Face and its path
// prefix on the Server's listener.
const AWSFaceName = "aws"

// The simulated AWS's defaults: the access key every AWS face accepts
// unless removed (AWSDeleteKey), its account, and the region `mpool up` and
// the examples use. Any region is served, each with a default VPC.
const (
	AWSDefaultAccessKeyID     = "AKIAMPOOLSIMULATED01"
	AWSDefaultSecretAccessKey = "mpool-simulated-aws-secret"
	AWSDefaultRegion          = "us-east-1"
	AWSDefaultAccountID       = "000000000001"
	// AWSDefaultSubnetID is the default VPC's subnet in <region>a of
	// us-east-1 (the examples' subnet); the other subnets' IDs derive from
	// the account and region (AWSDefaultVPC).
	AWSDefaultSubnetID = "subnet-0123456789abcdef0"
)

// Tags of a launch template version's instance tag specification (or of the
// Auto Scaling group, propagated at launch) the AWS face reads.
const (
	// AWSTagModelHash is the core's ModelHash of the instances launched
	// from the version; without it the face uses <template-id>:<version>.
	AWSTagModelHash = "mpool.dev/model-hash"
	// AWSTagKubernetesVersion is the kubelet version the instances' Nodes
	// report; without it the face derives it from the AMI's name
	// (capa-ami-ubuntu-24.04-v1.31.2-... → v1.31.2), else the core's
	// default.
	AWSTagKubernetesVersion = "mpool.dev/kubernetes-version"
)

// AWSFace is the simulated AWS: Amazon EC2 Auto Scaling and the part of
// Amazon EC2 a machine pool needs (launch templates, instances, AMIs, the
// default VPC), over the AWS Query protocol with Signature Version 4, as the
// unmodified AWS SDK for Go v2 and the AWS CLI speak them (see the package
// doc, "The AWS face"). It is served on a listener of its own (plain HTTP),
// registered in BuiltinFaces with its defaults; Options.Faces may replace it
// with one configured otherwise.
type AWSFace struct {
	// VCPUQuota is the Running On-Demand Standard (A, C, D, H, I, M, R, T,
	// Z) instances vCPU limit per account and region; zero is unlimited.
	// Launches beyond it fail as scaling activities with
	// VcpuLimitExceeded, as EC2's do.
	VCPUQuota int
	// Budgets are the request token buckets per account, region and
	// service (and EC2 action category); the zero value is off.
	// AWSEC2Budgets and AWSAutoScalingBudgets are the figures to use.
	Budgets AWSBudgets
	// Keys are access keys accepted besides those registered in the
	// face's data (AWSSetKey, the default one).
	Keys []AWSKey
	// ClockSkew is how far a request's X-Amz-Date may be from the cloud's
	// clock (default 15 minutes, as AWS).
	ClockSkew time.Duration
	// SpotInterruptionNotice is the time between a Spot interruption
	// (AWSInterruptSpot) and the instance's termination (default
	// AWSDefaultSpotInterruptionNotice, EC2's two minutes).
	SpotInterruptionNotice time.Duration

	buckets core.Buckets
}

// Name implements Face.
func (*AWSFace) Name() string { return AWSFaceName }

// OwnListener implements ListenerFace: the AWS SDKs want a bare host
// (BaseEndpoint, AWS_ENDPOINT_URL) and sign the path.
func (*AWSFace) OwnListener() bool { return true }

// Describe implements FaceDescriber: the default account's ID (FaceLines
// prints its access key, DefaultAccount).
func (*AWSFace) Describe() string {
	return "account " + AWSDefaultAccountID
}

// AWSFaceOf returns the AWS face c serves, or a zero one (no quota, no
// keys of its own) when it serves none: the face whose keys, templates and
// quota a face built on it (EKS) uses.
func AWSFaceOf(c *core.Cloud) *AWSFace {
	if f, _ := c.Face(AWSFaceName).(*AWSFace); f != nil {
		return f
	}
	return &AWSFace{}
}

// DefaultAccount implements server.AccountFace.
func (*AWSFace) DefaultAccount() core.Account {
	return core.Account{ID: AWSDefaultAccessKeyID, Secret: AWSDefaultSecretAccessKey, Region: AWSDefaultRegion}
}

func (f *AWSFace) clockSkew() time.Duration { return core.OrDefault(f.ClockSkew, 15*time.Minute) }

// AWSScope is the core scope of an account's region: "<account>/<region>",
// for Cloud.Scope and the admin endpoints' ?face=aws&scope=.
func AWSScope(account, region string) string { return account + "/" + region }

// AWSGroupKey is the core's key of an Auto Scaling group of the AWS face.
func AWSGroupKey(account, region, name string) core.GroupKey {
	return core.GroupKey{Face: AWSFaceName, Scope: AWSScope(account, region), Name: name}
}

// Operation names of the AWS face, as counted in Stats: aws.<service>.<Action>.
const (
	OpAWSCreateAutoScalingGroup         = "aws.autoscaling.CreateAutoScalingGroup"
	OpAWSUpdateAutoScalingGroup         = "aws.autoscaling.UpdateAutoScalingGroup"
	OpAWSDescribeAutoScalingGroups      = "aws.autoscaling.DescribeAutoScalingGroups"
	OpAWSDeleteAutoScalingGroup         = "aws.autoscaling.DeleteAutoScalingGroup"
	OpAWSSetDesiredCapacity             = "aws.autoscaling.SetDesiredCapacity"
	OpAWSTerminateInstanceInASG         = "aws.autoscaling.TerminateInstanceInAutoScalingGroup"
	OpAWSCreateOrUpdateTags             = "aws.autoscaling.CreateOrUpdateTags"
	OpAWSDeleteTags                     = "aws.autoscaling.DeleteTags"
	OpAWSDescribeScalingActivities      = "aws.autoscaling.DescribeScalingActivities"
	OpAWSAutoScalingUnknown             = "aws.autoscaling.Unknown"
	OpAWSCreateLaunchTemplate           = "aws.ec2.CreateLaunchTemplate"
	OpAWSCreateLaunchTemplateVersion    = "aws.ec2.CreateLaunchTemplateVersion"
	OpAWSDescribeLaunchTemplates        = "aws.ec2.DescribeLaunchTemplates"
	OpAWSDescribeLaunchTemplateVersions = "aws.ec2.DescribeLaunchTemplateVersions"
	OpAWSDeleteLaunchTemplateVersions   = "aws.ec2.DeleteLaunchTemplateVersions"
	OpAWSModifyLaunchTemplate           = "aws.ec2.ModifyLaunchTemplate"
	OpAWSDeleteLaunchTemplate           = "aws.ec2.DeleteLaunchTemplate"
	OpAWSDescribeInstances              = "aws.ec2.DescribeInstances"
	OpAWSDescribeImages                 = "aws.ec2.DescribeImages"
	OpAWSDescribeSubnets                = "aws.ec2.DescribeSubnets"
	OpAWSDescribeVpcs                   = "aws.ec2.DescribeVpcs"
	OpAWSDescribeAvailabilityZones      = "aws.ec2.DescribeAvailabilityZones"
	OpAWSEC2Unknown                     = "aws.ec2.Unknown"
)

// awsRequest is a parsed Query request, carried in the request's context.
type awsRequest struct {
	service string // awsapi.ServiceAutoScaling or awsapi.ServiceEC2
	action  string
	form    url.Values
	body    []byte
	id      string
	// account and region are set once the request is authenticated.
	account, region string
}

type awsRequestKey struct{}

func awsReq(r *http.Request) *awsRequest {
	a, _ := r.Context().Value(awsRequestKey{}).(*awsRequest)
	if a == nil {
		a = &awsRequest{service: awsapi.ServiceAutoScaling, id: NewRequestID()}
	}
	return a
}

// NewRequestID is a new request ID, as AWS's services answer them (a
// random UUID).
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return core.UUIDFrom(b[:])
}

// awsHandler serves the AWS face.
type awsHandler struct {
	face *AWSFace
	env  core.FaceEnv
	ops  map[string]http.HandlerFunc
}

// Handler implements Face.
func (f *AWSFace) Handler(env core.FaceEnv) http.Handler {
	h := &awsHandler{face: f, env: env}
	if err := migrateRecords(env.Cloud); err != nil {
		env.Cloud.Log().Error(err, "Moving the AWS face's launch templates and scaling activities to their records")
	}
	h.ops = env.WrapOps(h.authenticated, map[string]http.HandlerFunc{
		OpAWSCreateAutoScalingGroup:         h.createASG,
		OpAWSUpdateAutoScalingGroup:         h.updateASG,
		OpAWSDescribeAutoScalingGroups:      h.describeASGs,
		OpAWSDeleteAutoScalingGroup:         h.onGroup(h.deleteASG),
		OpAWSSetDesiredCapacity:             h.onGroup(h.setDesiredCapacity),
		OpAWSTerminateInstanceInASG:         h.terminateInstance,
		OpAWSSetInstanceHealth:              h.setInstanceHealth,
		OpAWSTerminateInstances:             h.ec2TerminateInstances,
		OpAWSDescribeNetworkInterfaces:      h.describeNetworkInterfaces,
		OpAWSDescribeDhcpOptions:            h.describeDhcpOptions,
		OpAWSCreateOrUpdateTags:             h.createOrUpdateTags,
		OpAWSDeleteTags:                     h.deleteTags,
		OpAWSDescribeScalingActivities:      h.onGroup(h.describeScalingActivities),
		OpAWSPutLifecycleHook:               h.putLifecycleHook,
		OpAWSDescribeLifecycleHooks:         h.onGroup(h.describeLifecycleHooks),
		OpAWSDeleteLifecycleHook:            h.deleteLifecycleHook,
		OpAWSCompleteLifecycleAction:        h.completeLifecycleAction,
		OpAWSRecordLifecycleActionHeartbeat: h.recordLifecycleActionHeartbeat,
		OpAWSSuspendProcesses:               h.suspendProcesses,
		OpAWSResumeProcesses:                h.resumeProcesses,
		OpAWSStartInstanceRefresh:           h.startInstanceRefresh,
		OpAWSDescribeInstanceRefreshes:      h.onGroup(h.describeInstanceRefreshes),
		OpAWSCancelInstanceRefresh:          h.cancelInstanceRefresh,
		OpAWSCreateLaunchTemplate:           h.createLaunchTemplate,
		OpAWSCreateLaunchTemplateVersion:    h.createLaunchTemplateVersion,
		OpAWSDescribeLaunchTemplates:        h.describeLaunchTemplates,
		OpAWSDescribeLaunchTemplateVersions: h.describeLaunchTemplateVersions,
		OpAWSDeleteLaunchTemplateVersions:   h.deleteLaunchTemplateVersions,
		OpAWSModifyLaunchTemplate:           h.modifyLaunchTemplate,
		OpAWSDeleteLaunchTemplate:           h.deleteLaunchTemplate,
		OpAWSDescribeInstances:              h.describeInstances,
		OpAWSDescribeImages:                 h.describeImages,
		OpAWSDescribeSubnets:                h.describeSubnets,
		OpAWSDescribeVpcs:                   h.describeVpcs,
		OpAWSDescribeAvailabilityZones:      h.describeAvailabilityZones,
		OpAWSAutoScalingUnknown:             h.unknownAction,
		OpAWSEC2Unknown:                     h.unknownAction,
	})
	return h
}

// ServeHTTP parses a Query request (form-encoded POST, or GET with the
// parameters in the URL), tells the service apart by the SigV4 credential
// scope (else the Version parameter) and routes it by its Action.
func (h *awsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &awsRequest{id: NewRequestID()}
	body, err := io.ReadAll(io.LimitReader(r.Body, admin.MaxBody))
	if err != nil {
		writeASGError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "The request body could not be read.")
		return
	}
	req.body = body
	form, _ := url.ParseQuery(r.URL.RawQuery)
	if r.Method == http.MethodPost {
		bf, err := url.ParseQuery(string(body))
		if err != nil {
			writeASGError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "The request body is not form-encoded.")
			return
		}
		for k, v := range bf {
			form[k] = append(form[k], v...)
		}
	}
	req.form = form
	req.action = form.Get("Action")
	req.service = credentialService(r)
	if req.service == "" {
		req.service = awsapi.ServiceAutoScaling
		if form.Get("Version") == awsapi.EC2Version {
			req.service = awsapi.ServiceEC2
		}
	}
	r = r.WithContext(context.WithValue(r.Context(), awsRequestKey{}, req))
	op := "aws." + req.service + "." + req.action
	if _, ok := h.ops[op]; !ok || req.action == "" || req.action == "Unknown" {
		op = "aws." + req.service + ".Unknown"
		if _, ok := h.ops[op]; !ok {
			op = OpAWSAutoScalingUnknown
		}
	}
	h.ops[op](w, r)
}

// credentialService returns the service of the Authorization header's
// credential scope (or of X-Amz-Credential), or "".
func credentialService(r *http.Request) string {
	cred := ""
	if a := r.Header.Get("Authorization"); a != "" {
		if _, after, ok := strings.Cut(a, "Credential="); ok {
			cred, _, _ = strings.Cut(after, ",")
		}
	} else {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) == 5 {
		return parts[3]
	}
	return ""
}

// authenticated verifies the request's signature and answers its
// service's throttling before fn.
func (h *awsHandler) authenticated(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := awsReq(r)
		if !h.authenticate(w, r, req) {
			return
		}
		if v := req.form.Get("Version"); v == "" || req.service == awsapi.ServiceEC2 && v != awsapi.EC2Version ||
			req.service == awsapi.ServiceAutoScaling && v != awsapi.AutoScalingVersion {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidAction,
				fmt.Sprintf("Could not find operation %s for version %s", req.action, v))
			return
		}
		if !h.throttle(w, req) {
			return
		}
		fn(w, r)
	}
}

func (h *awsHandler) unknownAction(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	if req.action == "" {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeMissingAction, "Missing Action")
		return
	}
	h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidAction,
		fmt.Sprintf("The action %s is not valid for this web service (the simulated AWS does not serve it).", req.action))
}

// scope is the core scope of the authenticated request.
func (h *awsHandler) scope(req *awsRequest) core.Scope {
	return h.env.Cloud.Scope(AWSFaceName, AWSScope(req.account, req.region))
}

// writeXML writes a successful response: Auto Scaling's
// <ActionResponse><ActionResult>result</ActionResult><ResponseMetadata/>,
// or EC2's <ActionResponse><requestId/>fields</ActionResponse>.
func (h *awsHandler) writeResult(w http.ResponseWriter, req *awsRequest, result any) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	name := req.action + "Response"
	var err error
	if req.service == awsapi.ServiceEC2 {
		if s, ok := result.(interface{ SetRequestID(string) }); ok {
			s.SetRequestID(req.id)
		}
		err = enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: name}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: awsapi.EC2Namespace}}})
	} else {
		start := xml.StartElement{Name: xml.Name{Local: name}, Attr: []xml.Attr{{Name: xml.Name{Local: "xmlns"}, Value: awsapi.AutoScalingNamespace}}}
		err = enc.EncodeToken(start)
		if err == nil && result != nil {
			err = enc.EncodeElement(result, xml.StartElement{Name: xml.Name{Local: req.action + "Result"}})
		}
		if err == nil {
			err = enc.EncodeElement(awsapi.ResponseMetadata{RequestID: req.id}, xml.StartElement{Name: xml.Name{Local: "ResponseMetadata"}})
		}
		if err == nil {
			err = enc.EncodeToken(start.End())
		}
	}
	if err == nil {
		err = enc.Flush()
	}
	if err != nil {
		h.writeError(w, req, http.StatusInternalServerError, awsapi.CodeInternalFailure, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", req.id)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// writeError answers an error in the request's service's shape.
func (h *awsHandler) writeError(w http.ResponseWriter, req *awsRequest, status int, code, message string) {
	if req.service == awsapi.ServiceEC2 {
		writeEC2Error(w, req, status, code, message)
		return
	}
	writeASGError(w, req, status, code, message)
}

func writeASGError(w http.ResponseWriter, req *awsRequest, status int, code, message string) {
	typ := "Sender"
	if status >= 500 {
		typ = "Receiver"
	}
	writeXMLBody(w, req, status, awsapi.ASGErrorResponse{
		Xmlns: awsapi.AutoScalingNamespace, RequestID: req.id,
		Error: awsapi.ASGError{Type: typ, Code: code, Message: message},
	})
}

func writeEC2Error(w http.ResponseWriter, req *awsRequest, status int, code, message string) {
	writeXMLBody(w, req, status, awsapi.EC2ErrorResponse{
		Errors: []awsapi.EC2Error{{Code: code, Message: message}}, RequestID: req.id,
	})
}

func writeXMLBody(w http.ResponseWriter, req *awsRequest, status int, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("x-amzn-RequestId", req.id)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(xml.Header))
	_, _ = w.Write(b)
}

// WriteFault implements Face: throttling as each service answers it (Auto
// Scaling 400 Throttling "Rate exceeded"; EC2 503 RequestLimitExceeded
// "Request limit exceeded."), server errors as InternalFailure (Auto
// Scaling) or InternalError / Unavailable (EC2). AWS sends no Retry-After.
func (*AWSFace) WriteFault(w http.ResponseWriter, r *http.Request, f core.Fault) {
	req := awsReq(r)
	switch {
	case f.Kind == core.FaultThrottle && req.service == awsapi.ServiceEC2:
		writeEC2Error(w, req, http.StatusServiceUnavailable, awsapi.CodeRequestLimitExceeded, "Request limit exceeded. ("+f.Message+")")
	case f.Kind == core.FaultThrottle:
		writeASGError(w, req, http.StatusBadRequest, awsapi.CodeThrottling, "Rate exceeded ("+f.Message+")")
	case req.service == awsapi.ServiceEC2 && f.Status == http.StatusServiceUnavailable:
		writeEC2Error(w, req, f.Status, awsapi.CodeUnavailable, "The server is overloaded and can't handle the request. ("+f.Message+")")
	case req.service == awsapi.ServiceEC2:
		writeEC2Error(w, req, f.Status, awsapi.CodeInternalError, "An internal error has occurred. ("+f.Message+")")
	case f.Status == http.StatusServiceUnavailable:
		writeASGError(w, req, f.Status, awsapi.CodeServiceUnavailable, "Service is unavailable. ("+f.Message+")")
	default:
		writeASGError(w, req, f.Status, awsapi.CodeInternalFailure, "An internal failure occurred. ("+f.Message+")")
	}
}

// writeCloudError maps the core's errors onto the request's service's.
func (h *awsHandler) writeCloudError(w http.ResponseWriter, req *awsRequest, err error) {
	switch core.CodeOf(err) {
	case core.CodeNotFound, core.CodeInvalid:
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, err.(*core.Error).Message)
	case core.CodeQuotaExceeded, core.CodeConflict:
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeLimitExceeded, err.(*core.Error).Message)
	default:
		h.writeError(w, req, http.StatusInternalServerError, awsapi.CodeInternalFailure, err.Error())
	}
}

// Query parameters.

// qIndices returns the list indices N of prefix.N.* (EC2's flattened lists;
// Auto Scaling's prefix.member.N: pass prefix+".member"), sorted.
func qIndices(form url.Values, prefix string) []int {
	seen := map[int]bool{}
	p := prefix + "."
	for k := range form {
		if !strings.HasPrefix(k, p) {
			continue
		}
		seg, _, _ := strings.Cut(k[len(p):], ".")
		if n, err := strconv.Atoi(seg); err == nil && n > 0 {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// qList returns the values of the list prefix.N (EC2) or prefix.member.N
// (Auto Scaling), in order.
func qList(form url.Values, prefix string) []string {
	var out []string
	for _, n := range qIndices(form, prefix) {
		out = append(out, form.Get(prefix+"."+strconv.Itoa(n)))
	}
	return out
}

// qHas reports whether the form has key or anything under key.
func qHas(form url.Values, key string) bool {
	if _, ok := form[key]; ok {
		return true
	}
	for k := range form {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// qInt parses an integer parameter; ok is false when it is present but not
// an integer.
func qInt(form url.Values, key string) (v *int64, ok bool) {
	s, present := form[key]
	if !present || len(s) == 0 {
		return nil, true
	}
	n, err := strconv.ParseInt(s[0], 10, 64)
	if err != nil {
		return nil, false
	}
	return &n, true
}

func qBool(form url.Values, key string) *bool {
	s, ok := form[key]
	if !ok || len(s) == 0 {
		return nil
	}
	b := strings.EqualFold(s[0], "true")
	return &b
}

// Paging tokens are opaque to clients: the offset of the next page.

func pageToken(offset int, scope string) string {
	return hex.EncodeToString([]byte(scope + "#" + strconv.Itoa(offset)))
}

func parsePageToken(tok, scope string) (int, bool) {
	if tok == "" {
		return 0, true
	}
	b, err := hex.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	s, n, ok := strings.Cut(string(b), "#")
	off, err := strconv.Atoi(n)
	if !ok || s != scope || err != nil || off < 0 {
		return 0, false
	}
	return off, true
}

// pageOf is the part of list from offset off (past the end: none), of at
// most limit items, and the token of the next page in scope ("" on the
// last page).
func pageOf[T any](list []T, off, limit int, scope string) ([]T, string) {
	off = min(off, len(list))
	end := min(len(list), off+limit)
	if end < len(list) {
		return list[off:end], pageToken(end, scope)
	}
	return list[off:end], ""
}

// asgPageOffset is the offset an Auto Scaling request's NextToken names in
// scope (0 without one); an invalid token is answered with
// InvalidNextToken.
func (h *awsHandler) asgPageOffset(w http.ResponseWriter, req *awsRequest, scope string) (int, bool) {
	off, ok := parsePageToken(req.form.Get("NextToken"), scope)
	if !ok {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidNextToken, "The token '"+req.form.Get("NextToken")+"' is invalid.")
	}
	return off, ok
}

// asgMaxRecords is an Auto Scaling request's MaxRecords, def when it is not
// sent; a value outside 1 to 100 is answered with a ValidationError.
func (h *awsHandler) asgMaxRecords(w http.ResponseWriter, req *awsRequest, def int) (int, bool) {
	max, ok := qInt(req.form, "MaxRecords")
	if !ok || max != nil && (*max < 1 || *max > 100) {
		h.writeError(w, req, http.StatusBadRequest, awsapi.CodeValidationError, "1 validation error detected: Value '"+req.form.Get("MaxRecords")+"' at 'maxRecords' failed to satisfy constraint: Member must have value less than or equal to 100")
		return 0, false
	}
	if max == nil {
		return def, true
	}
	return int(*max), true
}

// AWSHex returns n hex digits derived from parts: the simulated AWS's
// stable IDs (instances, AMIs, subnets, ARNs' parts).
func AWSHex(n int, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:])[:n]
}

// AWSTime is t as AWS's APIs and messages write times (UTC, milliseconds).
func AWSTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// InstanceIdentity implements Face: instance IDs "i-" + 17 hex digits;
// providerIDs aws:///<zone>/<id>; a private address in the zone's subnet
// and the host name AWS derives from it (ip-10-0-1-2.ec2.internal in
// us-east-1, ip-10-0-1-2.<region>.compute.internal elsewhere); ds.meta_data
// as EC2's metadata service (local_hostname, hostname, instance_id,
// instance_type, ami_id, local_ipv4, availability_zone, region,
// account_id); the instance payload records the launch template version it
// launched from.
func (*AWSFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	p := core.DecodePayload[awsGroupPayload](in.GroupPayload)
	account, region, _ := strings.Cut(in.Group.Scope, "/")
	id := "i-" + AWSHex(17, "instance", in.Group.String(), strconv.FormatUint(in.Seq, 10))
	sub := defaultSubnetIn(account, region, in.Zone)
	for _, s := range p.Subnets {
		if sn := findSubnet(account, region, s); sn != nil && sn.zone == in.Zone {
			sub = sn
			break
		}
	}
	var ip string
	if sub != nil {
		ip = subnetAddress(sub, in.Seq, in.AddressInUse)
	}
	host := ""
	if ip != "" {
		host = "ip-" + strings.ReplaceAll(ip, ".", "-") + awsDNSSuffix(region)
	}
	ip4 := ip
	inst := awsInstancePayload{
		LaunchTemplate: p.Resolved,
		InstanceType:   p.InstanceType,
		ImageID:        p.ImageID,
		KeyName:        p.KeyName,
		Spot:           p.Spot,
		Protected:      p.NewInstancesProtected,
		Tags:           p.instanceTags(),
	}
	mixedIdentity(&inst, &p)
	if sub != nil {
		inst.SubnetID, inst.VpcID = sub.id, defaultVPCID(account, region)
	}
	inst.Tags = append(inst.Tags, awsapi.Tag{Key: "aws:autoscaling:groupName", Value: in.Group.Name})
	// Launch lifecycle hooks hold the instance in Pending:Wait.
	inst.Waits = p.waits(in.Group.Name, id, awsapi.TransitionLaunching, nil)
	payload, _ := json.Marshal(inst)
	md := map[string]string{
		core.MetaRegion: region,
		"hostname":      host,
		"instance_type": p.InstanceType,
		"ami_id":        p.ImageID,
		"account_id":    account,
	}
	if in.Zone != "" {
		md[core.MetaAvailabilityZone] = in.Zone
	}
	return core.InstanceIdentity{
		ID:         id,
		ProviderID: "aws:///" + in.Zone + "/" + id,
		Hostname:   host,
		PrivateIP:  ip4,
		Metadata:   md,
		Payload:    payload,
		Hold:       len(inst.Waits) > 0,
	}
}

// subnetHosts is how many addresses of a subnet's /20 instances can have:
// AWS reserves the first four and the last.
const subnetHosts = 4096 - 5

// subnetAddress picks sub's address for the instance of cloud sequence seq:
// the first free one (inUse, nil: all free) from the one the sequence
// points at, as AWS gives each live instance of a subnet its own address. A
// full subnet (4,091 live instances) gets the sequence's address again; AWS
// would refuse the launch (InsufficientFreeAddressesInSubnet).
func subnetAddress(sub *awsSubnet, seq uint64, inUse func(string) bool) string {
	at := func(i int) string {
		off := 4 + (int(seq%subnetHosts)+i)%subnetHosts
		return fmt.Sprintf("10.0.%d.%d", sub.third+off/256, off%256)
	}
	for i := range subnetHosts {
		if ip := at(i); inUse == nil || !inUse(ip) {
			return ip
		}
	}
	return at(0)
}

// awsDNSSuffix is the private DNS suffix of a region's instances.
func awsDNSSuffix(region string) string {
	if region == "us-east-1" {
		return ".ec2.internal"
	}
	return "." + region + ".compute.internal"
}
