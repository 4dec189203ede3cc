package ec2machines

import (
	"context"
	"github.com/go-logr/logr/testr"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
	"github.com/stratos-sh/stratos/internal/sim/moto"
	"github.com/stratos-sh/stratos/internal/sim/physics"
	"github.com/stratos-sh/stratos/internal/sim/simtest"
	"github.com/stratos-sh/stratos/test/harness"
)

// eventually polls cond every 20 ms for up to 10 s.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

func nodeReady(node *corev1.Node) (corev1.ConditionStatus, string) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status, c.Message
		}
	}
	return corev1.ConditionUnknown, ""
}

// TestKubeletOnMoto runs the fake cloud's kubelet simulator on moto's instances against a
// real API server: an instance launched with user data gets its Node, with what the user
// data asks; a pod bound to it runs; a stop and a start take the Node through NotReady
// and back.
func TestKubeletOnMoto(t *testing.T) {
	env := harness.StartT(t)
	ec2Client := motoEC2(t)
	clk := testingclock.NewFakeClock(epoch)
	p := physics.DefaultPhysics()
	p.JitterPercent = 0
	m := New(Options{EC2: ec2Client, ClusterName: cluster, Region: moto.Region, Physics: p, Clock: clk, PollInterval: 50 * time.Millisecond})

	mgr := simtest.NewManager(t, env.Config, env.Scheme, testr.NewWithOptions(t, testr.Options{Verbosity: 1}))
	if err := mgr.Add(m); err != nil {
		t.Fatal(err)
	}
	if err := kubelet.NewKubelet(m, env.Client, kubelet.KubeletOptions{HeartbeatInterval: 200 * time.Millisecond}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	simtest.RunManager(t, mgr)

	userData := mimeDocument("\n", nodeConfig(`--node-labels=stratos.sh/nodepool=web,stratos.sh/nodeclaim=web-1`, `--register-with-taints=stratos.sh/standby:NoSchedule`))
	id := runInstance(t, ec2Client, "us-east-1c", "m5.large", userData, map[string]string{v1beta1.TagCluster: cluster})
	eventually(t, "the poll to see the instance", func(context.Context) (bool, error) {
		_, views := m.NodeViews()
		return len(views) == 1, nil
	})
	name := viewOf(t, m, id).NodeName

	node := &corev1.Node{}
	getNode := func(ctx context.Context) error { return env.Client.Get(ctx, client.ObjectKey{Name: name}, node) }
	clk.Step(p.LaunchDelay + p.BootDelay)
	eventually(t, "the Node registered", func(ctx context.Context) (bool, error) { return getNode(ctx) == nil, nil })
	if node.Spec.ProviderID != "aws:///us-east-1c/"+id || node.Labels[v1beta1.LabelNodeClaim] != "web-1" ||
		node.Labels[corev1.LabelInstanceTypeStable] != "m5.large" || node.Labels[corev1.LabelTopologyZone] != "us-east-1c" ||
		!slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&v1beta1.StandbyTaint) }) {
		t.Errorf("Node %s: provider ID %s, labels %v, taints %v", name, node.Spec.ProviderID, node.Labels, node.Spec.Taints)
	}
	eventually(t, "the Node's status", func(ctx context.Context) (bool, error) {
		status, _ := nodeReady(node)
		return getNode(ctx) == nil && status == corev1.ConditionFalse, nil
	})
	if node.Status.Capacity.Pods().Value() != 29 || node.Status.Allocatable.Cpu().MilliValue() != 1930 {
		t.Errorf("capacity %v allocatable %v, want an m5.large's 29 pods and 1930m", node.Status.Capacity, node.Status.Allocatable)
	}

	clk.Step(p.ReadyDelay)
	eventually(t, "the Node Ready", func(ctx context.Context) (bool, error) {
		status, _ := nodeReady(node)
		return getNode(ctx) == nil && status == corev1.ConditionTrue, nil
	})
	firstBoot := node.Status.NodeInfo.BootID
	eventually(t, "the Node's Lease", func(ctx context.Context) (bool, error) {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: corev1.NamespaceNodeLease, Name: name}, &coordinationv1.Lease{}) == nil, nil
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"},
		Spec:       corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	if err := env.Client.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	// The machine pulls the pod's image, and the containers start ContainerStartDelay
	// after, from when the kubelet first sees the pod, which the test cannot tell: step
	// the clock by the start delay until they run.
	eventually(t, "the pod Running", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		running := err == nil && pod.Status.Phase == corev1.PodRunning && pod.Status.HostIP == viewOf(t, m, id).PrivateIP
		if !running {
			clk.Step(p.ContainerStartDelay)
		}
		return running, err
	})
	if cs := pod.Status.ContainerStatuses; len(cs) != 1 || !strings.HasPrefix(cs[0].ImageID, "app@sha256:") {
		t.Errorf("container statuses %+v, want app:1's image ID", cs)
	}
	eventually(t, "the Node listing the image", func(ctx context.Context) (bool, error) {
		return getNode(ctx) == nil && len(node.Status.Images) == 1 && slices.Contains(node.Status.Images[0].Names, "app:1"), nil
	})

	if _, err := ec2Client.StopInstances(context.Background(), &ec2.StopInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Node shutting down", func(ctx context.Context) (bool, error) {
		status, message := nodeReady(node)
		return getNode(ctx) == nil && status == corev1.ConditionFalse && strings.Contains(message, "shutting down"), nil
	})
	if _, err := ec2Client.StartInstances(context.Background(), &ec2.StartInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the poll to see the start", func(context.Context) (bool, error) { return viewOf(t, m, id).Boot == 2, nil })
	clk.Step(p.StartDelay + p.ResumeDelay)
	eventually(t, "the Node Ready after the start", func(ctx context.Context) (bool, error) {
		status, _ := nodeReady(node)
		return getNode(ctx) == nil && status == corev1.ConditionTrue && node.Status.NodeInfo.BootID != firstBoot, nil
	})
}
