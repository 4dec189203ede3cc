// Package nodeclass_test runs the EC2NodeClass controller against a real API server and
// moto_server: classes resolve through the EC2, SSM and IAM APIs over the wire, and
// their status, Events, finalizer and the drift of nodes on old images are what a
// cluster would see.
package nodeclass_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/smithy-go"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider/aws"
	"github.com/stratos-sh/stratos/internal/controllers/ec2nodeclass"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/scheme"
	"github.com/stratos-sh/stratos/internal/sim/moto"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/stack"
)

const (
	clusterName = "test"
	k8sVersion  = "1.37"
	// ssmRoot is where the tests publish image aliases: moto refuses parameters under /aws.
	ssmRoot = "/test/service"
	// alAMD64 and alARM64 are the parameters al2023@latest reads for the cluster.
	alAMD64 = ssmRoot + "/eks/optimized-ami/" + k8sVersion + "/amazon-linux-2023/x86_64/standard/recommended/image_id"
	alARM64 = ssmRoot + "/eks/optimized-ami/" + k8sVersion + "/amazon-linux-2023/arm64/standard/recommended/image_id"
)

// image is an image moto_server loads at its start (MOTO_AMIS_PATH), with a known
// creation date and architecture.
type image struct {
	ID           string `json:"ami_id"`
	Name         string `json:"name"`
	Architecture string `json:"architecture"`
	OwnerID      string `json:"owner_id"`
	CreationDate string `json:"creation_date"`
	State        string `json:"state"`
	Public       bool   `json:"public"`
}

// The images the tests publish behind al2023@latest: a first release and a newer one.
var (
	imageV1AMD64 = image{ID: "ami-0a1a0000000000001", Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20250601", Architecture: "x86_64", CreationDate: "2025-06-01T00:00:00.000Z"}
	imageV1ARM64 = image{ID: "ami-0a1a0000000000002", Name: "amazon-eks-node-al2023-arm64-standard-1.37-v20250601", Architecture: "arm64", CreationDate: "2025-06-01T00:00:00.000Z"}
	imageV2AMD64 = image{ID: "ami-0a1a0000000000003", Name: "amazon-eks-node-al2023-x86_64-standard-1.37-v20250701", Architecture: "x86_64", CreationDate: "2025-07-01T00:00:00.000Z"}
)

// fixture is one test's API server, moto_server and manager running the EC2NodeClass
// controller, with the AWS resources every class of the tests selects: subnets in two
// zones and a security group tagged stratos.sh/discovery=test, and a node role.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	env      *harness.Env
	clients  *aws.Clients
	resolver *countingResolver
	mgr      manager.Manager
	// subnets are the wanted resolution of the discovery tag, by ID.
	subnets []v1beta1.ResolvedSubnet
	group   string
}

// newFixture starts the API server and moto_server, publishes al2023@latest (the first
// release) and makes the network and role; setup adds controllers to the manager before
// it starts, besides the EC2NodeClass controller with opts.
func newFixture(t *testing.T, opts ec2nodeclass.Options, setup func(*fixture)) *fixture {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &fixture{t: t, ctx: ctx, env: harness.Lease(t)}
	f.startMoto(imageV1AMD64, imageV1ARM64, imageV2AMD64)
	f.putParameter(alAMD64, imageV1AMD64.ID)
	f.putParameter(alARM64, imageV1ARM64.ID)
	vpc, err := f.clients.EC2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: awssdk.String("10.0.0.0/16")})
	if err != nil {
		t.Fatal(err)
	}
	discovery := []ec2types.Tag{{Key: awssdk.String("stratos.sh/discovery"), Value: awssdk.String("test")}}
	zones, err := f.clients.EC2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	zoneIDs := map[string]string{}
	for _, z := range zones.AvailabilityZones {
		zoneIDs[awssdk.ToString(z.ZoneName)] = awssdk.ToString(z.ZoneId)
	}
	for i, zone := range []string{"us-east-1a", "us-east-1b"} {
		out, err := f.clients.EC2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, AvailabilityZone: awssdk.String(zone),
			CidrBlock:         awssdk.String([]string{"10.0.1.0/24", "10.0.2.0/24"}[i]),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSubnet, Tags: discovery}}})
		if err != nil {
			t.Fatal(err)
		}
		f.subnets = append(f.subnets, v1beta1.ResolvedSubnet{ID: awssdk.ToString(out.Subnet.SubnetId), Zone: zone, ZoneID: zoneIDs[zone]})
	}
	slices.SortFunc(f.subnets, func(a, b v1beta1.ResolvedSubnet) int { return strings.Compare(a.ID, b.ID) })
	group, err := f.clients.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{VpcId: vpc.Vpc.VpcId, GroupName: awssdk.String("nodes"),
		Description: awssdk.String("nodes"), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup, Tags: discovery}}})
	if err != nil {
		t.Fatal(err)
	}
	f.group = awssdk.ToString(group.GroupId)
	f.createRole("nodes")

	resolver := aws.NewResolver(aws.Options{ClusterName: clusterName, KubernetesVersion: k8sVersion, SSMParameterRoot: ssmRoot}, f.clients)
	f.resolver = &countingResolver{Resolver: resolver, calls: map[string]int{}}
	f.mgr, err = ctrl.NewManager(f.env.Config, manager.Options{
		Logger:                 stack.TestLogger(t),
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := indexes.Register(ctx, f.mgr.GetFieldIndexer()); err != nil {
		t.Fatal(err)
	}
	reconciler := &ec2nodeclass.AWSReconciler{Client: f.mgr.GetClient(), Resolver: f.resolver, Recorder: f.mgr.GetEventRecorder("stratos"), Options: opts}
	if err := reconciler.SetupWithManager(f.mgr); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(f)
	}
	done := make(chan error, 1)
	go func() { done <- f.mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return f
}

// startMoto runs moto_server with images loaded and points AWS clients at it, with
// static credentials as the SDK's default chain reads them.
func (f *fixture) startMoto(images ...image) {
	for i := range images {
		images[i].State, images[i].OwnerID, images[i].Public = "available", "123456789012", true
	}
	data, err := json.Marshal(images)
	if err != nil {
		f.t.Fatal(err)
	}
	path := filepath.Join(f.t.TempDir(), "amis.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	f.t.Setenv("MOTO_AMIS_PATH", path)
	server := moto.StartT(f.t)
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true"} {
		f.t.Setenv(k, v)
	}
	f.clients, err = aws.NewClients(f.ctx, aws.Options{Region: moto.Region, Endpoint: server.Endpoint})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) putParameter(name, value string) {
	f.t.Helper()
	if _, err := f.clients.SSM.PutParameter(f.ctx, &ssm.PutParameterInput{Name: awssdk.String(name), Value: awssdk.String(value),
		Type: ssmtypes.ParameterTypeString, Overwrite: awssdk.Bool(true)}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) createRole(name string) {
	f.t.Helper()
	if _, err := f.clients.IAM.CreateRole(f.ctx, &iam.CreateRoleInput{RoleName: awssdk.String(name),
		AssumeRolePolicyDocument: awssdk.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)}); err != nil {
		f.t.Fatal(err)
	}
}

// profileExists reports whether IAM has the instance profile.
func (f *fixture) profileExists(name string) bool {
	f.t.Helper()
	_, err := f.clients.IAM.GetInstanceProfile(f.ctx, &iam.GetInstanceProfileInput{InstanceProfileName: awssdk.String(name)})
	if err == nil {
		return true
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchEntity" {
		return false
	}
	f.t.Fatal(err)
	return false
}

func (f *fixture) createProfile(name string) {
	f.t.Helper()
	if _, err := f.clients.IAM.CreateInstanceProfile(f.ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: awssdk.String(name)}); err != nil {
		f.t.Fatal(err)
	}
}

// gone reports whether the EC2NodeClass is gone from the API server.
func (f *fixture) gone(name string) bool {
	f.t.Helper()
	err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, &v1beta1.EC2NodeClass{})
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// class is an EC2NodeClass on al2023@latest with the fixture's network and role.
func class(name string) *v1beta1.EC2NodeClass {
	return &v1beta1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.EC2NodeClassSpec{
			AMISelectorTerms:           []v1beta1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "test"}}},
			SecurityGroupSelectorTerms: []v1beta1.SecurityGroupSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "test"}}},
			Role:                       "nodes",
		},
	}
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := f.env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) get(name string) *v1beta1.EC2NodeClass {
	f.t.Helper()
	c := &v1beta1.EC2NodeClass{}
	if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, c); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// ready is the class's Ready condition, or nil.
func (f *fixture) ready(name string) *metav1.Condition {
	return meta.FindStatusCondition(f.get(name).Status.Conditions, v1beta1.ConditionReady)
}

// eventually polls cond until it holds, within 30 seconds.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		f.t.Fatalf("waiting for %s: %v", what, err)
	}
}

// events are the Events about the named object with reason.
func (f *fixture) events(name, reason string) []eventsv1.Event {
	f.t.Helper()
	list := &eventsv1.EventList{}
	if err := f.env.Client.List(f.ctx, list); err != nil {
		f.t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// countingResolver counts the resolutions of each class and the sweeps, so that a test
// knows the controller came back to one.
type countingResolver struct {
	*aws.Resolver
	mu     sync.Mutex
	calls  map[string]int
	sweeps int
}

func (r *countingResolver) SweepInstanceProfiles(ctx context.Context, keep func(class string) bool) ([]string, error) {
	removed, err := r.Resolver.SweepInstanceProfiles(ctx, keep)
	r.mu.Lock()
	r.sweeps++
	r.mu.Unlock()
	return removed, err
}

func (r *countingResolver) sweepCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sweeps
}

func (r *countingResolver) Resolve(ctx context.Context, class *v1beta1.EC2NodeClass) aws.Resolution {
	r.mu.Lock()
	r.calls[class.Name]++
	r.mu.Unlock()
	return r.Resolver.Resolve(ctx, class)
}

func (r *countingResolver) count(class string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[class]
}
