package ec2machines

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/moto"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

const cluster = "test"

var epoch = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// motoEC2 starts a moto_server and returns an EC2 client of it with static credentials.
func motoEC2(t *testing.T) *ec2.Client {
	t.Helper()
	server := moto.StartT(t)
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: "testing", SecretAccessKey: "testing"}, nil
	})
	return ec2.New(ec2.Options{Region: moto.Region, Credentials: creds, BaseEndpoint: aws.String(server.Endpoint)})
}

// runInstance launches one instance in the default subnet of a zone, as the operator
// would: with user data and tags.
func runInstance(t *testing.T, client *ec2.Client, zone, instanceType, userData string, tags map[string]string) string {
	t.Helper()
	var tagList []ec2types.Tag
	for k, v := range tags {
		tagList = append(tagList, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	out, err := client.RunInstances(context.Background(), &ec2.RunInstancesInput{
		ImageId: aws.String("ami-12c6146b"), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		InstanceType: ec2types.InstanceType(instanceType), UserData: aws.String(userData),
		Placement:         &ec2types.Placement{AvailabilityZone: aws.String(zone)},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tagList}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Instances[0].InstanceId)
}

func poll(t *testing.T, m *Machines) {
	t.Helper()
	if err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func viewOf(t *testing.T, m *Machines, id string) physics.NodeView {
	t.Helper()
	_, views := m.NodeViews()
	for _, v := range views {
		if v.InstanceID == id {
			return v
		}
	}
	t.Fatalf("no view of %s among %d", id, len(views))
	return physics.NodeView{}
}

func wantPhase(t *testing.T, m *Machines, id string, boot int, phase physics.NodePhase) {
	t.Helper()
	if v := viewOf(t, m, id); v.Boot != boot || v.Phase != phase {
		t.Fatalf("%s: boot %d %v, want boot %d %v", id, v.Boot, v.Phase, boot, phase)
	}
}

// TestMachinesFollowInstances launches instances in moto and follows one through a
// launch, a stop, a start and a termination, with the kubelet's timeline on a fake clock.
func TestMachinesFollowInstances(t *testing.T) {
	client := motoEC2(t)
	clk := testingclock.NewFakeClock(epoch)
	p := physics.DefaultPhysics()
	p.JitterPercent = 0
	m := New(Options{EC2: client, ClusterName: cluster, Region: moto.Region, Physics: p, Clock: clk})
	owned := map[string]string{v1beta1.TagCluster: cluster, v1beta1.TagNodeClaim: "c1"}
	userData := mimeDocument("\n", nodeConfig(`--node-labels=stratos.sh/nodeclaim=c1,team=a`, `--register-with-taints=stratos.sh/standby:NoSchedule`))
	id := runInstance(t, client, "us-east-1b", "m5.xlarge", userData, owned)
	broken := runInstance(t, client, "us-east-1a", "m5.large", "bm90IE1JTUU=", map[string]string{v1beta1.TagCluster: cluster})
	runInstance(t, client, "us-east-1a", "m5.large", userData, map[string]string{v1beta1.TagCluster: "another"})

	poll(t, m)
	select {
	case <-m.Changes():
	default:
		t.Error("no change signalled for new instances")
	}
	if _, views := m.NodeViews(); len(views) != 2 {
		t.Fatalf("%d views, want the cluster's 2 instances", len(views))
	}
	wantPhase(t, m, id, 1, physics.NodeAbsent)
	v := viewOf(t, m, id)
	if !strings.HasSuffix(v.NodeName, ".ec2.internal") || v.ProviderID != "aws:///us-east-1b/"+id || v.PrivateIP == "" {
		t.Errorf("node %q provider ID %q IP %q", v.NodeName, v.ProviderID, v.PrivateIP)
	}
	wantLabels := map[string]string{
		"stratos.sh/nodeclaim": "c1", "team": "a",
		corev1.LabelHostname: v.NodeName, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
		corev1.LabelInstanceTypeStable: "m5.xlarge", corev1.LabelTopologyZone: "us-east-1b", corev1.LabelTopologyRegion: moto.Region,
	}
	if !maps.Equal(v.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", v.Labels, wantLabels)
	}
	if len(v.Taints) != 1 || v.Taints[0].Key != v1beta1.TaintStandbyKey {
		t.Errorf("taints %v", v.Taints)
	}
	if v.InstanceType.Capacity.Pods().Value() != 58 || v.InstanceType.Capacity.Cpu().Value() != 4 {
		t.Errorf("capacity %v, want moto's m5.xlarge: 4 CPUs and 58 pods", v.InstanceType.Capacity)
	}
	if problems := m.Problems(); len(problems) != 1 || !strings.Contains(problems[0], broken) {
		t.Errorf("problems %v, want the broken user data of %s", problems, broken)
	}

	// The launch: seen running now, registered after the launch and boot delays, Ready
	// after the ready delay.
	clk.Step(p.LaunchDelay + p.BootDelay - time.Nanosecond)
	wantPhase(t, m, id, 1, physics.NodeAbsent)
	if next, ok := m.NextEvent(clk.Now()); !ok || !next.Equal(epoch.Add(p.LaunchDelay+p.BootDelay)) {
		t.Errorf("next event %v %v, want the registration", next, ok)
	}
	clk.Step(time.Nanosecond)
	wantPhase(t, m, id, 1, physics.NodeNotReady)
	clk.Step(p.ReadyDelay)
	wantPhase(t, m, id, 1, physics.NodeReady)
	wantPhase(t, m, broken, 1, physics.NodeAbsent)
	if _, host, ok := m.PodHost(v.NodeName, "default/p"); !ok || !host.Ready || !host.Running || host.StartDelay != p.ContainerStartDelay {
		t.Errorf("pod host %+v %v, want ready and running", host, ok)
	}
	if images := viewOf(t, m, id).Images; len(images) != 0 {
		t.Errorf("images %v on a new instance no pod asked anything of", images)
	}

	// A pod's images are pulled one after the other from when it asks; the second is
	// cut by the stop below.
	readyAt := clk.Now()
	pulls, ok := m.PullImages(v.NodeName, 1, readyAt, []string{"app:1", "sidecar:1"})
	if !ok || len(pulls) != 2 || pulls[0].State != physics.ImagePulling || !pulls[1].At.Equal(readyAt.Add(2*p.ImagePullDelay)) {
		t.Fatalf("pulls %+v %v, want both pulling, one after the other", pulls, ok)
	}
	select {
	case <-m.Changes():
	default:
		t.Error("no change signalled for a queued pull")
	}
	if next, ok := m.NextEvent(readyAt); !ok || !next.Equal(readyAt.Add(p.ImagePullDelay)) {
		t.Errorf("next event %v %v, want the first pull's end", next, ok)
	}
	clk.Step(p.ImagePullDelay + p.ImagePullDelay/2)
	if images := viewOf(t, m, id).Images; !slices.Equal(images, []string{"app:1"}) {
		t.Errorf("images %v, want app:1", images)
	}

	ctx := context.Background()
	if _, err := client.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	poll(t, m)
	wantPhase(t, m, id, 1, physics.NodeShuttingDown)
	if _, host, _ := m.PodHost(v.NodeName, "default/p"); host.Running || host.Ready {
		t.Errorf("pod host of a stopped instance %+v", host)
	}
	if _, ok := m.PullImages(v.NodeName, 1, readyAt, []string{"sidecar:1"}); ok {
		t.Error("the kubelet of a stopped instance pulled")
	}

	// A start: the kubelet registers after the start delay, Ready after the resume delay.
	if _, err := client.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	poll(t, m)
	wantPhase(t, m, id, 2, physics.NodeAbsent)
	clk.Step(p.StartDelay)
	wantPhase(t, m, id, 2, physics.NodeNotReady)
	clk.Step(p.ResumeDelay)
	wantPhase(t, m, id, 2, physics.NodeReady)
	if images := viewOf(t, m, id).Images; !slices.Equal(images, []string{"app:1"}) {
		t.Errorf("images after a restart %v: pulled images stay on disk, the cut pull is lost", images)
	}
	// Asked again, the image on disk is there, and the one cut is pulled whole from Ready.
	pulls, ok = m.PullImages(v.NodeName, 2, readyAt, []string{"app:1", "sidecar:1"})
	if !ok || pulls[0].State != physics.ImagePresent || pulls[1].State != physics.ImagePulling || !pulls[1].At.Equal(clk.Now().Add(p.ImagePullDelay)) {
		t.Errorf("pulls after the restart %+v %v, want app:1 present and sidecar:1 pulled again from now", pulls, ok)
	}

	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	poll(t, m)
	wantPhase(t, m, id, 2, physics.NodeShuttingDown)
	states := map[string]cloudprovider.InstanceState{}
	for _, inst := range m.Instances() {
		states[inst.ID] = inst.State
	}
	if len(states) != 2 || states[id] != cloudprovider.StateTerminated || states[broken] != cloudprovider.StateRunning {
		t.Errorf("instances %v, want the cluster's two, %s terminated", states, id)
	}
	calls := m.Calls()
	if calls["DescribeInstances"] != 4 || calls["DescribeInstanceAttribute"] != 2 || calls["DescribeInstanceTypes"] != 1 {
		t.Errorf("the kubelets' calls %v: want 4 polls, the user data of 2 instances, and their 2 types described at once", calls)
	}
}
