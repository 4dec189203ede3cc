package migrate

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// classConversion is the conversion of one Karpenter EC2NodeClass.
type classConversion struct {
	rec recorder
	in  karpenterEC2NodeClass
	// out is nil when the class cannot be converted; its pools are skipped.
	out *v1beta1.EC2NodeClass
	// kubelet is the class's kubelet configuration as Stratos pools take it.
	kubelet *v1beta1.KubeletConfiguration
	// kubeletPools are the pools the kubelet configuration was moved onto.
	kubeletPools []string
}

var (
	aliasPattern    = regexp.MustCompile(`^([a-z0-9]+)@(.+)$`)
	stratosAlias    = regexp.MustCompile(`^(al2023|bottlerocket)@(latest|v[0-9]+([.][0-9]+)*)$`)
	amiIDPattern    = regexp.MustCompile(`^ami-[0-9a-f]{8,17}$`)
	subnetPattern   = regexp.MustCompile(`^subnet-[0-9a-f]{8,17}$`)
	sgPattern       = regexp.MustCompile(`^sg-[0-9a-f]{8,17}$`)
	iamNamePattern  = regexp.MustCompile(`^[A-Za-z0-9+=,.@_-]+$`)
	snapshotPattern = regexp.MustCompile(`^snap-[0-9a-f]{8,17}$`)
)

func (c *classConversion) convert() {
	in := c.in.Spec
	out := &v1beta1.EC2NodeClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: kindEC2NodeClass},
		ObjectMeta: metav1.ObjectMeta{Name: c.in.Metadata.Name},
	}
	if len(c.in.Metadata.Name) > 253 || !dnsSubdomainPattern.MatchString(c.in.Metadata.Name) {
		c.rec.skipped("a node class's name must be a lowercase DNS name")
		return
	}
	var ok bool
	if out.Spec.AMISelectorTerms, out.Spec.AMIFamily, ok = c.amiTerms(); !ok {
		return
	}
	for i, t := range in.SubnetSelectorTerms {
		field := fmt.Sprintf("spec.subnetSelectorTerms[%d]", i)
		switch {
		case (t.ID != "") == (len(t.Tags) > 0):
			c.rec.unmapped(field, "a subnet term needs exactly one of id and tags")
		case t.ID != "" && !subnetPattern.MatchString(t.ID):
			c.rec.unmapped(field, "id %q is not a subnet ID", t.ID)
		case !c.selectorTagsOK(field, t.Tags):
		default:
			out.Spec.SubnetSelectorTerms = append(out.Spec.SubnetSelectorTerms, v1beta1.SubnetSelectorTerm{ID: t.ID, Tags: t.Tags})
		}
	}
	for i, t := range in.SecurityGroupSelectorTerms {
		field := fmt.Sprintf("spec.securityGroupSelectorTerms[%d]", i)
		set := 0
		for _, b := range []bool{t.ID != "", t.Name != "", len(t.Tags) > 0} {
			if b {
				set++
			}
		}
		switch {
		case set != 1:
			c.rec.unmapped(field, "a security group term needs exactly one of id, name and tags")
		case t.ID != "" && !sgPattern.MatchString(t.ID):
			c.rec.unmapped(field, "id %q is not a security group ID", t.ID)
		case len(t.Name) > 255:
			c.rec.unmapped(field, "name is longer than 255 characters")
		case !c.selectorTagsOK(field, t.Tags):
		default:
			out.Spec.SecurityGroupSelectorTerms = append(out.Spec.SecurityGroupSelectorTerms, v1beta1.SecurityGroupSelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags})
		}
	}
	if len(out.Spec.SubnetSelectorTerms) == 0 || len(out.Spec.SecurityGroupSelectorTerms) == 0 {
		c.rec.skipped("a Stratos EC2NodeClass needs at least one subnet and one security group selector term, and none is left")
		return
	}
	if len(out.Spec.SubnetSelectorTerms) > 30 || len(out.Spec.SecurityGroupSelectorTerms) > 30 {
		c.rec.skipped("a Stratos EC2NodeClass takes at most 30 subnet and 30 security group terms")
		return
	}
	if !c.identity(out) {
		return
	}
	if len(in.CapacityReservationSelectorTerms) > 0 {
		c.rec.unmapped("spec.capacityReservationSelectorTerms", "Stratos does not launch into capacity reservations; its nodes are on-demand or spot")
	}
	out.Spec.Tags = c.tags()
	out.Spec.BlockDeviceMappings = c.blockDevices()
	if in.InstanceStorePolicy != nil {
		c.rec.unmapped("spec.instanceStorePolicy", "%s: Stratos does not set up instance store volumes (no RAID0); format them in userData if you need them", *in.InstanceStorePolicy)
	}
	if in.UserData != nil {
		if len(*in.UserData) > 16384 {
			c.rec.unmapped("spec.userData", "longer than the 16384 characters Stratos takes (EC2's limit, before encoding)")
		} else {
			out.Spec.UserData = ptr.To(*in.UserData)
		}
	}
	if in.DetailedMonitoring != nil && *in.DetailedMonitoring {
		c.rec.unmapped("spec.detailedMonitoring", "Stratos does not turn on CloudWatch detailed monitoring; instances get basic monitoring")
	}
	if in.AssociatePublicIPAddress != nil {
		c.rec.unmapped("spec.associatePublicIPAddress", "Stratos leaves public addresses to the subnet's setting (map public IP on launch)")
	}
	if in.IPPrefixCount != nil {
		c.rec.unmapped("spec.ipPrefixCount", "Stratos does not assign IPv4 prefixes to the instance's network interface; the VPC CNI's prefix delegation assigns its own")
	}
	if in.EnclaveOptions != nil && in.EnclaveOptions.Enabled != nil && *in.EnclaveOptions.Enabled {
		c.rec.unmapped("spec.enclaveOptions", "Stratos does not enable Nitro Enclaves on its instances")
	}
	if in.Context != nil {
		c.rec.unmapped("spec.context", "Stratos does not pass a context to EC2 Fleet")
	}
	c.metadataOptions(out)
	if in.Kubelet != nil {
		c.kubelet = convertKubelet(c.rec, "spec.kubelet", in.Kubelet)
	}
	c.out = out
}

// amiTerms converts the image selection, and the family of images selected by ID, name
// or tags. An alias names its family, and Stratos refuses an amiFamily that disagrees
// with it, so beside an alias none is written.
func (c *classConversion) amiTerms() ([]v1beta1.AMISelectorTerm, string, bool) {
	in := c.in.Spec
	family := ""
	if in.AMIFamily != nil {
		family = *in.AMIFamily
	}
	terms := in.AMISelectorTerms
	if len(terms) == 0 && family != "" && family != "Custom" {
		// v1beta1: a family without terms is the family's latest image.
		terms = []karpenterAMITerm{{Alias: strings.ToLower(family) + "@latest"}}
		c.rec.changed("spec.amiFamily", "%s without amiSelectorTerms is the alias %s@latest, as Karpenter v1 writes it", family, strings.ToLower(family))
	}
	var out []v1beta1.AMISelectorTerm
	byAlias := false
	for i, t := range terms {
		field := fmt.Sprintf("spec.amiSelectorTerms[%d]", i)
		switch {
		case t.SSMParameter != "":
			c.rec.unmapped(field, "ssmParameter %s: Stratos selects images by alias, id, name or tags, not by SSM parameter", t.SSMParameter)
		case t.Alias != "":
			term, ok := c.alias(field, t.Alias)
			if !ok {
				return nil, "", false
			}
			byAlias = true
			out = append(out, term)
		case t.ID != "":
			if !amiIDPattern.MatchString(t.ID) {
				c.rec.unmapped(field, "id %q is not an AMI ID", t.ID)
				continue
			}
			out = append(out, v1beta1.AMISelectorTerm{ID: t.ID})
		case t.Name != "" || len(t.Tags) > 0:
			if len(t.Name) > 128 || len(t.Owner) > 64 || len(t.Tags) > 20 {
				c.rec.unmapped(field, "longer than Stratos takes: name 128 characters, owner 64, 20 tags")
				continue
			}
			out = append(out, v1beta1.AMISelectorTerm{Name: t.Name, Owner: t.Owner, Tags: t.Tags})
		default:
			c.rec.unmapped(field, "selects no image: it needs one of alias, id, name or tags")
		}
	}
	if byAlias && len(out) > 1 {
		c.rec.skipped("an alias must be the only AMI selector term in Stratos, as in Karpenter")
		return nil, "", false
	}
	if len(out) == 0 {
		c.rec.skipped("no AMI selector term Stratos can use is left, and an EC2NodeClass needs one")
		return nil, "", false
	}
	if len(out) > 30 {
		c.rec.skipped("a Stratos EC2NodeClass takes at most 30 AMI selector terms")
		return nil, "", false
	}
	switch {
	case family != "" && !byAlias:
		return out, c.customImageFamily(family), true
	case family == "Custom" && in.UserData != nil:
		c.rec.changed("spec.amiFamily", "Custom with an alias: Karpenter boots the alias's image with spec.userData alone, while Stratos merges spec.userData with what the image family needs to join; check that it does not join twice")
	}
	return out, "", true
}

// alias converts an image alias. AL2 has no Stratos support and Windows no Stratos nodes.
func (c *classConversion) alias(field, alias string) (v1beta1.AMISelectorTerm, bool) {
	if stratosAlias.MatchString(alias) {
		return v1beta1.AMISelectorTerm{Alias: alias}, true
	}
	m := aliasPattern.FindStringSubmatch(alias)
	switch {
	case m != nil && m[1] == "al2":
		c.rec.changed(field, "alias %s: Stratos does not run Amazon Linux 2 (its EKS images end with Kubernetes 1.32); the class selects al2023@latest instead. AL2's user data (bootstrap.sh) does not work on AL2023, which reads nodeadm's NodeConfig: check spec.userData", alias)
		return v1beta1.AMISelectorTerm{Alias: "al2023@latest"}, true
	case m != nil && strings.HasPrefix(m[1], "windows"):
		c.rec.skipped("alias %s: Stratos launches Linux nodes only; this class and the pools that use it are not converted", alias)
	default:
		c.rec.skipped("alias %s is not one Stratos takes: al2023 or bottlerocket, then @latest or @vX.Y.Z", alias)
	}
	return v1beta1.AMISelectorTerm{}, false
}

// customImageFamily is the amiFamily of images selected by ID, name or tags: AL2023,
// Bottlerocket and Custom are Stratos's too; the others are reported, and the images are
// then booted as a class without amiFamily boots them (nodeadm user data).
func (c *classConversion) customImageFamily(family string) string {
	switch family {
	case v1beta1.AMIFamilyAL2023, v1beta1.AMIFamilyBottlerocket, v1beta1.AMIFamilyCustom:
		return family
	case "AL2":
		c.rec.unmapped("spec.amiFamily", "AL2: Stratos does not run Amazon Linux 2; the images selected are booted as AL2023 images, which they are not: select AL2023 images")
	default:
		c.rec.unmapped("spec.amiFamily", "%s: Stratos launches Linux nodes only, booting images selected by id, name or tags as AL2023 images", family)
	}
	return ""
}

func (c *classConversion) selectorTagsOK(field string, tags map[string]string) bool {
	if len(tags) > 20 {
		c.rec.unmapped(field, "Stratos takes at most 20 tags in a selector term")
		return false
	}
	for _, k := range sortedKeys(tags) {
		if isKarpenterKey(k) {
			c.rec.kept(field+".tags["+k+"]", "Stratos selects by the same tag, so the subnets and security groups need no new tag; keep it on them after Karpenter is removed")
		}
	}
	return true
}

// identity sets the role or instance profile; exactly one is required.
func (c *classConversion) identity(out *v1beta1.EC2NodeClass) bool {
	in := c.in.Spec
	if in.Role != nil && *in.Role != "" {
		role := *in.Role
		if strings.HasPrefix(role, "arn:") {
			if _, name, found := strings.Cut(role, ":role/"); found {
				role = name[strings.LastIndex(name, "/")+1:]
				c.rec.changed("spec.role", "the ARN %s is the role name %s: Stratos takes names", *in.Role, role)
			}
		}
		if len(role) > 64 || !iamNamePattern.MatchString(role) {
			c.rec.skipped("role %q is not an IAM role name", *in.Role)
			return false
		}
		out.Spec.Role = role
	}
	if in.InstanceProfile != nil && *in.InstanceProfile != "" {
		if len(*in.InstanceProfile) > 128 || !iamNamePattern.MatchString(*in.InstanceProfile) {
			c.rec.skipped("instanceProfile %q is not an IAM instance profile name", *in.InstanceProfile)
			return false
		}
		out.Spec.InstanceProfile = *in.InstanceProfile
	}
	if (out.Spec.Role == "") == (out.Spec.InstanceProfile == "") {
		c.rec.skipped("a Stratos EC2NodeClass needs exactly one of role and instanceProfile")
		return false
	}
	return true
}

// tags keeps the tags Stratos allows. Karpenter's own tag keys on instances (the pool,
// the claim, the class) are Karpenter's; Stratos adds its own.
func (c *classConversion) tags() map[string]string {
	var out map[string]string
	for _, k := range sortedKeys(c.in.Spec.Tags) {
		v := string(c.in.Spec.Tags[k])
		field := "spec.tags[" + k + "]"
		switch {
		case strings.HasPrefix(k, v1beta1.Group+"/") || strings.HasPrefix(k, "kubernetes.io/cluster/"):
			c.rec.unmapped(field, "tag keys under stratos.sh/ and kubernetes.io/cluster/ are Stratos's own")
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			c.rec.unmapped(field, "tag keys starting with aws: are AWS's")
		case len(k) > 128 || len(v) > 256:
			c.rec.unmapped(field, "tag keys are at most 128 characters and values 256")
		case len(out) == 45:
			c.rec.unmapped(field, "Stratos takes at most 45 tags (EC2 takes 50, and Stratos adds up to 5)")
		default:
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func (c *classConversion) blockDevices() []v1beta1.BlockDeviceMapping {
	var out []v1beta1.BlockDeviceMapping
	roots := 0
	for i, b := range c.in.Spec.BlockDeviceMappings {
		field := fmt.Sprintf("spec.blockDeviceMappings[%d]", i)
		if b.DeviceName == nil || *b.DeviceName == "" || len(*b.DeviceName) > 32 || b.EBS == nil {
			c.rec.unmapped(field, "Stratos needs a deviceName of at most 32 characters and an ebs volume")
			continue
		}
		dev, ok := c.blockDevice(field+".ebs", b.EBS)
		if !ok {
			continue
		}
		if b.RootVolume {
			if roots++; roots > 1 {
				c.rec.unmapped(field, "at most one block device may be the root volume")
				continue
			}
		}
		out = append(out, v1beta1.BlockDeviceMapping{DeviceName: *b.DeviceName, EBS: dev, RootVolume: b.RootVolume})
	}
	if len(out) > 50 {
		c.rec.unmapped("spec.blockDeviceMappings", "Stratos takes at most 50 block devices; the rest are left out")
		out = out[:50]
	}
	return out
}

func (c *classConversion) blockDevice(field string, in *karpenterBlockDevice) (v1beta1.BlockDevice, bool) {
	out := v1beta1.BlockDevice{DeleteOnTermination: in.DeleteOnTermination, Encrypted: in.Encrypted, IOPS: in.IOPS, Throughput: in.Throughput}
	volumeType := "gp3"
	if in.VolumeType != nil {
		volumeType = *in.VolumeType
		out.VolumeType = volumeType
	}
	if in.VolumeSize != nil {
		q, err := resource.ParseQuantity(string(*in.VolumeSize))
		if err != nil || q.Cmp(resource.MustParse("1Gi")) < 0 || q.Cmp(resource.MustParse("64Ti")) > 0 {
			c.rec.unmapped(field, "volumeSize %q: Stratos takes 1Gi to 64Ti; the volume is left out", *in.VolumeSize)
			return v1beta1.BlockDevice{}, false
		}
		out.VolumeSize = &q
	}
	if in.KMSKeyID != nil {
		out.KMSKeyID = *in.KMSKeyID
	}
	if in.SnapshotID != nil {
		if !snapshotPattern.MatchString(*in.SnapshotID) {
			c.rec.unmapped(field, "snapshotID %q is not a snapshot ID; the volume is left out", *in.SnapshotID)
			return v1beta1.BlockDevice{}, false
		}
		out.SnapshotID = *in.SnapshotID
	}
	if in.VolumeInitializationRate != nil {
		c.rec.unmapped(field+".volumeInitializationRate", "Stratos does not set a volume initialization rate; the volume initialises at EBS's default rate")
	}
	problem := ""
	switch {
	case !strings.Contains(" standard io1 io2 gp2 sc1 st1 gp3 ", " "+volumeType+" "):
		problem = fmt.Sprintf("volumeType %q is not one Stratos takes", volumeType)
	case in.IOPS != nil && !strings.Contains(" io1 io2 gp3 ", " "+volumeType+" "):
		problem = "iops applies only to io1, io2 and gp3 volumes"
	case in.IOPS != nil && (*in.IOPS < 100 || *in.IOPS > 256000 || (volumeType == "gp3" && (*in.IOPS < 3000 || *in.IOPS > 80000)) || (volumeType == "io1" && *in.IOPS > 64000)):
		problem = fmt.Sprintf("iops %d is outside what a %s volume takes", *in.IOPS, volumeType)
	case in.Throughput != nil && (volumeType != "gp3" || *in.Throughput < 125 || *in.Throughput > 2000):
		problem = "throughput applies only to gp3 volumes, from 125 to 2000 MiB/s"
	}
	if problem != "" {
		c.rec.unmapped(field, "%s; the volume is left out", problem)
		return v1beta1.BlockDevice{}, false
	}
	return out, true
}

func (c *classConversion) metadataOptions(out *v1beta1.EC2NodeClass) {
	in := c.in.Spec.MetadataOptions
	if in == nil {
		return
	}
	field := "spec.metadataOptions"
	enabled := func(name string, v *string) string {
		if v == nil {
			return ""
		}
		if *v != "enabled" && *v != "disabled" {
			c.rec.unmapped(field+"."+name, "%q is not enabled or disabled", *v)
			return ""
		}
		return *v
	}
	out.Spec.MetadataOptions.HTTPEndpoint = enabled("httpEndpoint", in.HTTPEndpoint)
	out.Spec.MetadataOptions.HTTPProtocolIPv6 = enabled("httpProtocolIPv6", in.HTTPProtocolIPv6)
	if in.HTTPPutResponseHopLimit != nil {
		if *in.HTTPPutResponseHopLimit < 1 || *in.HTTPPutResponseHopLimit > 64 {
			c.rec.unmapped(field+".httpPutResponseHopLimit", "%d: Stratos takes 1 to 64", *in.HTTPPutResponseHopLimit)
		} else {
			out.Spec.MetadataOptions.HTTPPutResponseHopLimit = *in.HTTPPutResponseHopLimit
		}
	}
	if in.HTTPTokens != nil {
		if *in.HTTPTokens != "required" && *in.HTTPTokens != "optional" {
			c.rec.unmapped(field+".httpTokens", "%q is not required or optional", *in.HTTPTokens)
		} else {
			out.Spec.MetadataOptions.HTTPTokens = *in.HTTPTokens
		}
	}
}
