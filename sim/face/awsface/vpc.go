package awsface

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// The simulated AWS's catalogue: every account has, in every region, a
// default VPC 10.0.0.0/16 with one /20 subnet in each of the zones
// <region>a, b and c; the AMIs of AWSKubernetesVersions (CAPA's reference
// images) and an Ubuntu image; the instance types of awsInstanceTypes.

// AWSKubernetesVersions are the Kubernetes versions the simulated AWS has
// CAPA reference AMIs of (v1.16.8 for seed 004's example, v1.17.3 to roll
// it to), named capa-ami-ubuntu-24.04-<version>-<build>
// and owned by AWSCAPAImageOwner, as clusterawsadm publishes them.
var AWSKubernetesVersions = []string{"v1.16.8", "v1.17.3", "v1.30.6", "v1.31.2", "v1.32.1", "v1.33.1"}

// Owners of the simulated AMIs.
const (
	// AWSCAPAImageOwner is the account publishing CAPA's reference AMIs.
	AWSCAPAImageOwner = "258751437250"
	// AWSCanonicalImageOwner is Canonical's account (Ubuntu images).
	AWSCanonicalImageOwner = "099720109477"
)

// awsImage is one simulated AMI.
type awsImage struct {
	name, owner, description, version, created string
}

const awsUbuntuImageName = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20250115"

func awsImages() []awsImage {
	var out []awsImage
	for i, v := range AWSKubernetesVersions {
		out = append(out, awsImage{
			name:        AWSImageName(v),
			owner:       AWSCAPAImageOwner,
			description: "Cluster API reference image: Ubuntu 24.04, Kubernetes " + v,
			version:     v,
			created:     fmt.Sprintf("2025-0%d-15T10:00:00.000Z", i+1),
		})
	}
	return append(out, awsImage{name: awsUbuntuImageName, owner: AWSCanonicalImageOwner,
		description: "Canonical, Ubuntu, 24.04, amd64 noble image", created: "2025-01-15T00:00:00.000Z"})
}

// AWSImageName is the name of the simulated CAPA AMI of a Kubernetes
// version (e.g. capa-ami-ubuntu-24.04-v1.31.2-1739577600).
func AWSImageName(version string) string {
	return "capa-ami-ubuntu-24.04-" + version + "-1739577600"
}

// AWSImageID is the ID of the simulated AMI named name in region (AMI IDs
// are regional), or "" when there is none.
func AWSImageID(region, name string) string {
	for _, im := range awsImages() {
		if im.name == name {
			return awsImageID(region, name)
		}
	}
	return ""
}

func awsImageID(region, name string) string { return "ami-" + AWSHex(17, "ami", region, name) }

// findImage returns the simulated AMI with id in region.
func findImage(region, id string) *awsImage {
	for _, im := range awsImages() {
		if awsImageID(region, im.name) == id {
			return &im
		}
	}
	return nil
}

// awsInstanceType is a simulated instance type.
type awsInstanceType struct {
	vcpus    int
	memoryMi int
	// standard: On-Demand Standard (A, C, D, H, I, M, R, T, Z), the
	// family the vCPU quota counts.
	standard bool
}

var awsInstanceTypes = map[string]awsInstanceType{
	"t3.micro": {2, 1024, true}, "t3.small": {2, 2048, true}, "t3.medium": {2, 4096, true},
	"t3.large": {2, 8192, true}, "t3.xlarge": {4, 16384, true},
	"m5.large": {2, 8192, true}, "m5.xlarge": {4, 16384, true}, "m5.2xlarge": {8, 32768, true},
	"m6i.large": {2, 8192, true}, "m6i.xlarge": {4, 16384, true}, "m7i.large": {2, 8192, true},
	"c5.large": {2, 4096, true}, "c5.xlarge": {4, 8192, true}, "r5.large": {2, 16384, true},
	"g4dn.xlarge": {4, 16384, false}, "p3.2xlarge": {8, 62464, false},
}

// awsSubnet is a subnet of a default VPC.
type awsSubnet struct {
	id, zone, zoneID string
	// third is the third octet of the subnet's 10.0.<third>.0/20.
	third int
}

func (s awsSubnet) cidr() string { return fmt.Sprintf("10.0.%d.0/20", s.third) }

// AWSDefaultVPCID is the ID of the default VPC of account in region.
func AWSDefaultVPCID(account, region string) string { return defaultVPCID(account, region) }

func defaultVPCID(account, region string) string {
	return "vpc-" + AWSHex(17, "vpc", account, region)
}

// AWSDefaultSubnetIDs returns the subnets of the default VPC of account in
// region by zone (<region>a, b, c). In us-east-1 the subnet of us-east-1a
// is AWSDefaultSubnetID in every account.
func AWSDefaultSubnetIDs(account, region string) map[string]string {
	out := map[string]string{}
	for _, s := range defaultSubnets(account, region) {
		out[s.zone] = s.id
	}
	return out
}

func defaultSubnets(account, region string) []awsSubnet {
	var out []awsSubnet
	for i, z := range []string{"a", "b", "c"} {
		zone := region + z
		id := "subnet-" + AWSHex(17, "subnet", account, region, zone)
		if region == AWSDefaultRegion && z == "a" {
			id = AWSDefaultSubnetID
		}
		out = append(out, awsSubnet{id: id, zone: zone, zoneID: awsZoneID(region, i+1), third: 16 * i})
	}
	return out
}

// AWSSubnetZone returns the zone of the subnet id of account's default VPC
// in region; false when there is no such subnet.
func AWSSubnetZone(account, region, id string) (string, bool) {
	if s := findSubnet(account, region, id); s != nil {
		return s.zone, true
	}
	return "", false
}

func findSubnet(account, region, id string) *awsSubnet {
	for _, s := range defaultSubnets(account, region) {
		if s.id == id {
			return &s
		}
	}
	return nil
}

func defaultSubnetIn(account, region, zone string) *awsSubnet {
	for _, s := range defaultSubnets(account, region) {
		if s.zone == zone {
			return &s
		}
	}
	return nil
}

// awsZoneID is a zone's ID as AWS spells them: use1-az1 for us-east-1's
// first zone.
func awsZoneID(region string, n int) string {
	parts := strings.Split(region, "-")
	if len(parts) != 3 {
		return region + "-az" + strconv.Itoa(n)
	}
	dir := map[string]string{"east": "e", "west": "w", "north": "n", "south": "s", "central": "c",
		"southeast": "se", "northeast": "ne", "southwest": "sw", "northwest": "nw"}[parts[1]]
	if dir == "" {
		dir = parts[1][:1]
	}
	return parts[0] + dir + parts[2] + "-az" + strconv.Itoa(n)
}

// awsFilters are EC2's Filter.N.Name / Filter.N.Value.M, by name.
type awsFilters map[string][]string

func ec2Filters(req *awsRequest) awsFilters {
	f := awsFilters{}
	for _, n := range qIndices(req.form, "Filter") {
		p := "Filter." + strconv.Itoa(n)
		f[req.form.Get(p+".Name")] = append(f[req.form.Get(p+".Name")], qList(req.form, p+".Value")...)
	}
	return f
}

// match reports whether one of the filter's values matches v (EC2's
// wildcards * and ?); true when the filter is absent.
func (f awsFilters) match(name string, v ...string) bool {
	vals, ok := f[name]
	if !ok {
		return true
	}
	for _, pat := range vals {
		re := globRE(pat)
		for _, s := range v {
			if re.MatchString(s) {
				return true
			}
		}
	}
	return false
}

// matchTags applies the tag:<key> and tag-key filters to tags.
func (f awsFilters) matchTags(tags []awsapi.Tag) bool {
	for name, vals := range f {
		switch {
		case strings.HasPrefix(name, "tag:"):
			key := strings.TrimPrefix(name, "tag:")
			var have []string
			for _, t := range tags {
				if t.Key == key {
					have = append(have, t.Value)
				}
			}
			if len(have) == 0 || !(awsFilters{name: vals}).match(name, have...) {
				return false
			}
		case name == "tag-key":
			var keys []string
			for _, t := range tags {
				keys = append(keys, t.Key)
			}
			if !f.match(name, keys...) {
				return false
			}
		}
	}
	return true
}

func globRE(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range pat {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// describeImages serves DescribeImages: the simulated AMIs of the region,
// by ImageId.N, Owner.N (self, amazon or account IDs) and the filters
// name, image-id, owner-id, state and architecture.
func (h *awsHandler) describeImages(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	ids := qList(req.form, "ImageId")
	owners := qList(req.form, "Owner")
	for _, id := range ids {
		if !awsIDRE("ami").MatchString(id) {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidAMIIDMalformed, fmt.Sprintf("Invalid id: %q (expecting \"ami-...\")", id))
			return
		}
		if findImage(req.region, id) == nil {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidAMIIDNotFound, fmt.Sprintf("The image id '[%s]' does not exist", id))
			return
		}
	}
	out := &awsapi.DescribeImagesResponse{Images: []awsapi.Image{}}
	for _, im := range awsImages() {
		id := awsImageID(req.region, im.name)
		if len(ids) > 0 && !slices.Contains(ids, id) {
			continue
		}
		if len(owners) > 0 && !slices.Contains(owners, im.owner) && !(slices.Contains(owners, "amazon") && im.owner == AWSCanonicalImageOwner) {
			continue
		}
		if !f.match("name", im.name) || !f.match("image-id", id) || !f.match("owner-id", im.owner) ||
			!f.match("state", "available") || !f.match("architecture", "x86_64") {
			continue
		}
		out.Images = append(out.Images, awsapi.Image{
			ImageID: id, ImageLocation: im.owner + "/" + im.name, ImageState: "available", ImageOwnerID: im.owner,
			CreationDate: im.created, IsPublic: true, Architecture: "x86_64", ImageType: "machine", Name: im.name,
			Description: im.description, RootDeviceType: "ebs", RootDeviceName: "/dev/sda1", VirtualizationType: "hvm",
			Hypervisor: "xen", PlatformDetails: "Linux/UNIX", EnaSupport: true,
		})
	}
	h.writeResult(w, req, out)
}

// awsIDRE matches resource IDs of a prefix: 8 or 17 hex digits.
func awsIDRE(prefix string) *regexp.Regexp {
	return regexp.MustCompile(`^` + prefix + `-([0-9a-f]{8}|[0-9a-f]{17})$`)
}

// describeSubnets serves DescribeSubnets: the default VPC's subnets, by
// SubnetId.N and the filters subnet-id, vpc-id, availability-zone,
// default-for-az and tag filters.
func (h *awsHandler) describeSubnets(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	ids := qList(req.form, "SubnetId")
	vpc := defaultVPCID(req.account, req.region)
	for _, id := range ids {
		if findSubnet(req.account, req.region, id) == nil {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidSubnetIDNF, fmt.Sprintf("The subnet ID '%s' does not exist", id))
			return
		}
	}
	out := &awsapi.DescribeSubnetsResponse{Subnets: []awsapi.Subnet{}}
	for _, s := range defaultSubnets(req.account, req.region) {
		if len(ids) > 0 && !slices.Contains(ids, s.id) || !f.match("subnet-id", s.id) || !f.match("vpc-id", vpc) ||
			!f.match("availability-zone", s.zone) || !f.match("default-for-az", "true") || !f.match("state", "available") || !f.matchTags(nil) {
			continue
		}
		out.Subnets = append(out.Subnets, awsapi.Subnet{
			SubnetID: s.id, SubnetArn: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", req.region, req.account, s.id),
			State: "available", VpcID: vpc, OwnerID: req.account, CidrBlock: s.cidr(), AvailableIPAddressCount: 4091,
			AvailabilityZone: s.zone, AvailabilityZoneID: s.zoneID, DefaultForAz: true, MapPublicIPOnLaunch: true,
		})
	}
	h.writeResult(w, req, out)
}

// describeVpcs serves DescribeVpcs: the default VPC.
func (h *awsHandler) describeVpcs(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	vpc := defaultVPCID(req.account, req.region)
	ids := qList(req.form, "VpcId")
	for _, id := range ids {
		if id != vpc {
			h.writeError(w, req, http.StatusBadRequest, awsapi.CodeInvalidVpcIDNF, fmt.Sprintf("The vpc ID '%s' does not exist", id))
			return
		}
	}
	out := &awsapi.DescribeVpcsResponse{Vpcs: []awsapi.Vpc{}}
	if f.match("vpc-id", vpc) && f.match("is-default", "true") && f.match("state", "available") && f.match("cidr", "10.0.0.0/16") && f.matchTags(nil) {
		out.Vpcs = append(out.Vpcs, awsapi.Vpc{VpcID: vpc, OwnerID: req.account, State: "available", CidrBlock: "10.0.0.0/16",
			DhcpOptionsID: awsDhcpOptionsID(req.account, req.region), InstanceTenancy: "default", IsDefault: true})
	}
	h.writeResult(w, req, out)
}

// describeAvailabilityZones serves DescribeAvailabilityZones: the region's
// three zones.
func (h *awsHandler) describeAvailabilityZones(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	names := qList(req.form, "ZoneName")
	out := &awsapi.DescribeAvailabilityZonesResponse{AvailabilityZones: []awsapi.AvailabilityZone{}}
	for _, s := range defaultSubnets(req.account, req.region) {
		if len(names) > 0 && !slices.Contains(names, s.zone) || !f.match("zone-name", s.zone) || !f.match("zone-id", s.zoneID) || !f.match("state", "available") {
			continue
		}
		out.AvailabilityZones = append(out.AvailabilityZones, awsapi.AvailabilityZone{
			ZoneName: s.zone, ZoneID: s.zoneID, ZoneState: "available", RegionName: req.region, ZoneType: "availability-zone",
			OptInStatus: "opt-in-not-required", GroupName: req.region, NetworkBorderGroup: req.region,
		})
	}
	h.writeResult(w, req, out)
}
