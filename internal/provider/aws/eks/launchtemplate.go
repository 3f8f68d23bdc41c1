package eks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TagTemplateNodegroup on a launch template mpool made for a node group
// names it ("<cluster>/<node group>"): Delete finds the templates to delete
// by it.
const TagTemplateNodegroup = "mpool.dev/eks-nodegroup"

// templateDescriptionPrefix starts the description of every launch
// template version mpool writes; the rest is the hash of its Template.
const templateDescriptionPrefix = "mpool template="

// templateErrorMarker is in the message of every error about the launch
// template: the adapter reports LaunchTemplateReady False by it.
const templateErrorMarker = "(spec.awsLaunchTemplate)"

// maxTemplateName is EC2's limit on a launch template's name.
const maxTemplateName = 128

// Template is a node group's launch template as mpool writes it from
// spec.awsLaunchTemplate: part of the model (its JSON encoding is hashed),
// each change one new version of the template. It holds what EKS accepts
// in a managed node group's launch template: no IAM instance profile, no
// Spot request, no subnet (the node group's), no user data (EKS
// bootstraps its nodes).
type Template struct {
	// Name is the launch template's name.
	Name string `json:"name"`
	// ImageID is a custom AMI (ami-...), "" for the AMI EKS picks by the
	// node group's AMI type and release.
	ImageID string `json:"imageID,omitempty"`
	// InstanceType is the instance type, "" for EKS's default.
	InstanceType string `json:"instanceType,omitempty"`
	// RootVolume replaces the AMI's root volume settings, nil for EKS's.
	RootVolume *awsprovider.Volume `json:"rootVolume,omitempty"`
	// NonRootVolumes are extra EBS volumes.
	NonRootVolumes []awsprovider.Volume `json:"nonRootVolumes,omitempty"`
	// SSHKeyName is the EC2 key pair, "" for none.
	SSHKeyName string `json:"sshKeyName,omitempty"`
	// SecurityGroupIDs are the nodes' security groups (sg-...).
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`
	// Metadata configures the instance metadata service.
	Metadata *awsprovider.Metadata `json:"metadata,omitempty"`
	// PrivateDNSName configures the nodes' host names.
	PrivateDNSName *awsprovider.PrivateDNSName `json:"privateDNSName,omitempty"`
	// CapacityReservationID targets a capacity reservation, "" for none.
	CapacityReservationID string `json:"capacityReservationID,omitempty"`
}

// hash identifies the template's content (a version's description).
func (t Template) hash() string {
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// data is the template's content in EC2's terms.
func (t Template) data() *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{}
	if t.ImageID != "" {
		d.ImageId = aws.String(t.ImageID)
	}
	if t.InstanceType != "" {
		d.InstanceType = ec2types.InstanceType(t.InstanceType)
	}
	if t.SSHKeyName != "" {
		d.KeyName = aws.String(t.SSHKeyName)
	}
	d.SecurityGroupIds = slices.Clone(t.SecurityGroupIDs)
	if v := t.RootVolume; v != nil {
		dev := v.DeviceName
		if dev == "" {
			dev = "/dev/xvda" // the root device of EKS's AMIs
		}
		d.BlockDeviceMappings = append(d.BlockDeviceMappings, awsprovider.BlockDevice(dev, *v))
	}
	for _, v := range t.NonRootVolumes {
		d.BlockDeviceMappings = append(d.BlockDeviceMappings, awsprovider.BlockDevice(v.DeviceName, v))
	}
	awsprovider.SetInstanceOptions(d, t.Metadata, t.PrivateDNSName)
	if id := t.CapacityReservationID; id != "" {
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationTarget: &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(id)},
		}
	}
	return d
}

// templateVersion is one version of a launch template.
type templateVersion struct {
	id      string
	version int64
}

// String is the version as EKS names it ("3").
func (v templateVersion) String() string { return strconv.FormatInt(v.version, 10) }

// ensureTemplate returns the launch template version holding t: the
// template's latest version when it holds t already (written by an earlier
// call, perhaps before a restart), else a new version
// (CreateLaunchTemplateVersion), or a new template (CreateLaunchTemplate,
// tagged with the node group and tags).
func (s *Nodegroups) ensureTemplate(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref, t Template, tags map[string]string) (templateVersion, error) {
	want := templateDescriptionPrefix + t.hash()
	res, err := c.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{
		LaunchTemplateName: aws.String(t.Name), Versions: []string{"$Latest"},
	})
	switch {
	case isTemplateNotFound(err):
		all := maps.Clone(tags)
		if all == nil {
			all = map[string]string{}
		}
		all[TagTemplateNodegroup] = cluster + "/" + ref.Name
		out, err := c.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(t.Name),
			LaunchTemplateData: t.data(),
			VersionDescription: aws.String(want),
			TagSpecifications:  []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: awsprovider.EC2Tags(all)}},
		})
		if err != nil {
			return templateVersion{}, templateError(err, ref, t.Name)
		}
		if out.LaunchTemplate == nil {
			return templateVersion{}, scalegroup.NewTransient("CreateLaunchTemplate answered no launch template", nil)
		}
		return templateVersion{id: aws.ToString(out.LaunchTemplate.LaunchTemplateId), version: aws.ToInt64(out.LaunchTemplate.LatestVersionNumber)}, nil
	case err != nil:
		return templateVersion{}, templateError(err, ref, t.Name)
	case len(res.LaunchTemplateVersions) == 0:
		return templateVersion{}, scalegroup.NewTransient("DescribeLaunchTemplateVersions answered no $Latest version of "+t.Name, nil)
	}
	latest := res.LaunchTemplateVersions[0]
	v := templateVersion{id: aws.ToString(latest.LaunchTemplateId), version: aws.ToInt64(latest.VersionNumber)}
	if aws.ToString(latest.VersionDescription) == want {
		return v, nil
	}
	out, err := c.ec2.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: aws.String(v.id), LaunchTemplateData: t.data(), VersionDescription: aws.String(want),
	})
	if err != nil {
		return templateVersion{}, templateError(err, ref, t.Name)
	}
	if out.LaunchTemplateVersion == nil {
		return templateVersion{}, scalegroup.NewTransient("CreateLaunchTemplateVersion answered no version", nil)
	}
	return templateVersion{id: v.id, version: aws.ToInt64(out.LaunchTemplateVersion.VersionNumber)}, nil
}

// deleteTemplates deletes the launch templates mpool made for the node
// group (tagged TagTemplateNodegroup), as CAPA deletes an
// AWSManagedMachinePool's template with its node group.
func (s *Nodegroups) deleteTemplates(ctx context.Context, c *sdkClients, cluster string, ref scalegroup.Ref) error {
	in := &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + TagTemplateNodegroup), Values: []string{cluster + "/" + ref.Name}},
	}}
	var ids []string
	p := ec2.NewDescribeLaunchTemplatesPaginator(c.ec2, in)
	if err := awsprovider.EachPage(ctx, p.HasMorePages, p.NextPage, func(page *ec2.DescribeLaunchTemplatesOutput) {
		for _, t := range page.LaunchTemplates {
			ids = append(ids, aws.ToString(t.LaunchTemplateId))
		}
	}); err != nil {
		return awsprovider.CloudError(err, ref)
	}
	for _, id := range ids {
		_, err := c.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)})
		if err != nil && !isTemplateNotFound(err) {
			return fmt.Errorf("deleting launch template %s: %w", id, awsprovider.CloudError(err, ref))
		}
	}
	return nil
}

// isTemplateNotFound reports whether err says the launch template does not
// exist.
func isTemplateNotFound(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	code := ae.ErrorCode()
	return strings.HasPrefix(code, "InvalidLaunchTemplateName.NotFound") || strings.HasPrefix(code, "InvalidLaunchTemplateId.NotFound")
}

// templateError maps an EC2 error about the launch template, naming it.
func templateError(err error, ref scalegroup.Ref, name string) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && (strings.HasPrefix(ae.ErrorCode(), "InvalidLaunchTemplate") || ae.ErrorCode() == "InvalidParameterValue" ||
		ae.ErrorCode() == "InvalidParameterCombination" || ae.ErrorCode() == "VersionLimitExceeded") {
		return scalegroup.NewInvalid(fmt.Sprintf("launch template %s %s: %s: %s", name, templateErrorMarker, ae.ErrorCode(), strings.Join(strings.Fields(ae.ErrorMessage()), " ")))
	}
	return awsprovider.CloudError(err, ref)
}
