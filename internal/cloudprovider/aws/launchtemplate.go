package aws

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/sync/singleflight"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// launchTemplates makes the launch templates launches use: one per content (user data,
// security groups, instance profile, disks, metadata options, hibernation),
// named stratos/<cluster>/<hash of the content>, so that the same content is one
// template and a changed content a new one. Names made or found are remembered: a
// launch from a known template makes no call for it. Unused templates are not deleted
// by the leader once no launch used them for a while (launchtemplategc.go).
type launchTemplates struct {
	ec2     *ec2.Client
	cluster string

	clock clock.PassiveClock

	mu    sync.Mutex
	known map[string]bool
	// lastUsed is when a launch last used each template, for garbage collection.
	lastUsed map[string]time.Time
	// inflight makes one CreateLaunchTemplate call for concurrent launches of one content.
	inflight singleflight.Group
}

func newLaunchTemplates(opts Options, clients *Clients) *launchTemplates {
	lt := &launchTemplates{cluster: opts.ClusterName, clock: opts.Clock, known: map[string]bool{}, lastUsed: map[string]time.Time{}}
	if clients != nil {
		lt.ec2 = clients.EC2
	}
	return lt
}

// launchTemplate is a template's name and content.
type launchTemplate struct {
	name string
	data *types.RequestLaunchTemplateData
}

// maxLaunchTemplateName is the longest launch template name EC2 accepts.
const maxLaunchTemplateName = 128

// templateFor returns the launch template of a node class and user data.
func (t *launchTemplates) templateFor(class *v1beta1.EC2NodeClass, userData string) (launchTemplate, error) {
	data := templateData(class, userData)
	content, err := json.Marshal(data)
	if err != nil {
		return launchTemplate{}, err
	}
	digest := sha256.Sum256(content)
	// EC2 takes names of up to 128 characters; a long cluster name (EKS allows 100) is
	// cut, and the digest, which covers the user data and so the cluster, keeps the name
	// unique.
	suffix := "/" + hex.EncodeToString(digest[:])[:20]
	cluster := t.cluster[:min(len(t.cluster), maxLaunchTemplateName-len("stratos/")-len(suffix))]
	return launchTemplate{name: "stratos/" + cluster + suffix, data: data}, nil
}

// templateData is what instances of the node class launch with, but for the instance
// type, the subnet and the image (of the type's architecture), which each override of a
// fleet sets: one template serves both architectures, and a new image behind an alias
// needs no new template.
func templateData(class *v1beta1.EC2NodeClass, userData string) *types.RequestLaunchTemplateData {
	data := &types.RequestLaunchTemplateData{
		IamInstanceProfile:  &types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(class.Status.InstanceProfile)},
		BlockDeviceMappings: blockDeviceMappings(class.Spec.BlockDeviceMappings),
		MetadataOptions:     metadataOptions(class.Spec.MetadataOptions),
	}
	// A Custom image's class may give no user data: the template then carries none
	// rather than an empty one.
	if userData != "" {
		data.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(userData)))
	}
	for _, sg := range class.Status.SecurityGroups {
		data.SecurityGroupIds = append(data.SecurityGroupIds, sg.ID)
	}
	if class.Spec.Hibernate {
		data.HibernationOptions = &types.LaunchTemplateHibernationOptionsRequest{Configured: aws.Bool(true)}
	}
	return data
}

func blockDeviceMappings(mappings []v1beta1.BlockDeviceMapping) []types.LaunchTemplateBlockDeviceMappingRequest {
	var out []types.LaunchTemplateBlockDeviceMappingRequest
	for _, m := range mappings {
		ebs := &types.LaunchTemplateEbsBlockDeviceRequest{
			VolumeType:          types.VolumeType(m.EBS.VolumeType),
			Encrypted:           m.EBS.Encrypted,
			DeleteOnTermination: m.EBS.DeleteOnTermination,
		}
		if m.EBS.VolumeSize != nil {
			ebs.VolumeSize = aws.Int32(gibibytes(*m.EBS.VolumeSize))
		}
		if m.EBS.IOPS != nil {
			ebs.Iops = aws.Int32(int32(*m.EBS.IOPS))
		}
		if m.EBS.Throughput != nil {
			ebs.Throughput = aws.Int32(int32(*m.EBS.Throughput))
		}
		if m.EBS.KMSKeyID != "" {
			ebs.KmsKeyId = aws.String(m.EBS.KMSKeyID)
		}
		if m.EBS.SnapshotID != "" {
			ebs.SnapshotId = aws.String(m.EBS.SnapshotID)
		}
		out = append(out, types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: aws.String(m.DeviceName), Ebs: ebs})
	}
	return out
}

// gibibytes rounds a volume size up to whole GiB, EC2's unit (at most 64Ti, per the CRD).
func gibibytes(size resource.Quantity) int32 {
	return int32(math.Ceil(size.AsApproximateFloat64() / (1 << 30)))
}

// metadataOptions converts the node class's IMDS options; unset ones are EC2's defaults.
func metadataOptions(o v1beta1.MetadataOptions) *types.LaunchTemplateInstanceMetadataOptionsRequest {
	out := &types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint:     types.LaunchTemplateInstanceMetadataEndpointState(o.HTTPEndpoint),
		HttpProtocolIpv6: types.LaunchTemplateInstanceMetadataProtocolIpv6(o.HTTPProtocolIPv6),
		HttpTokens:       types.LaunchTemplateHttpTokensState(o.HTTPTokens),
	}
	if o.HTTPPutResponseHopLimit > 0 {
		out.HttpPutResponseHopLimit = aws.Int32(int32(o.HTTPPutResponseHopLimit))
	}
	return out
}

// ensure makes the template unless it is known to exist. A template made meanwhile by
// another launch or another replica (EC2 answers that the name is in use) exists.
func (t *launchTemplates) ensure(ctx context.Context, lt launchTemplate) error {
	t.used(lt.name, t.clock.Now())
	t.mu.Lock()
	known := t.known[lt.name]
	t.mu.Unlock()
	if known {
		return nil
	}
	_, err, _ := t.inflight.Do(lt.name, func() (any, error) {
		// A flight that ended between the look above and this one made it.
		t.mu.Lock()
		known := t.known[lt.name]
		t.mu.Unlock()
		if known {
			return nil, nil
		}
		_, err := t.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(lt.name),
			LaunchTemplateData: lt.data,
			TagSpecifications: []types.TagSpecification{{
				ResourceType: types.ResourceTypeLaunchTemplate,
				Tags:         ec2Tags(map[string]string{v1beta1.TagCluster: t.cluster}),
			}},
		})
		if err != nil && awsErrorCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
			return nil, classify(cloudprovider.OpCreate, "", err)
		}
		t.mu.Lock()
		t.known[lt.name] = true
		t.mu.Unlock()
		return nil, nil
	})
	return err
}

// forget drops a template from the known ones, after EC2 said it does not exist (it was
// deleted behind Stratos's back): the next launch makes it again.
func (t *launchTemplates) forget(lt launchTemplate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.known, lt.name)
}

// isTemplateNotFound reports whether an AWS error code says a launch template is missing.
func isTemplateNotFound(code string) bool {
	return strings.HasPrefix(code, "InvalidLaunchTemplateName.NotFound") || strings.HasPrefix(code, "InvalidLaunchTemplateId.NotFound")
}
