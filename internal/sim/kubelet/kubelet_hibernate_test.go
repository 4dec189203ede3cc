package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Through a hibernation the kubelet and the pods freeze rather than shut down, and
// carry on after the resume: the same boot, the same containers, Ready again once the
// kubelet thaws, whether or not kube-controller-manager marked them meanwhile.
func TestKubeletThroughHibernation(t *testing.T) {
	pc := startPodCluster(t, 1)
	c, clk, p := pc.cloud, pc.clk, pc.cloud.Physics()
	ctx := context.Background()

	// Two hibernating nodes with a running pod each. kube-controller-manager's node
	// lifecycle controller will mark the first while it sleeps; the second sleeps less
	// than its grace period.
	marked := create(t, c, hibernating("marked"))
	unmarked := create(t, c, hibernating("unmarked"))
	clk.Step(p.LaunchDelay + p.BootDelay + p.ReadyDelay)
	type node struct {
		id, name string
		pod      client.ObjectKey
		before   *corev1.Node
		started  *corev1.Pod
	}
	nodes := []*node{{id: marked.ID}, {id: unmarked.ID}}
	for _, n := range nodes {
		n.name = view(t, c, n.id).NodeName
		pc.waitNode(n.name, "Ready", func(node *corev1.Node) bool { return ready(node).Status == corev1.ConditionTrue })
		n.pod = pc.bind("app-"+n.name, n.name)
	}
	clk.Step(p.ImagePullDelay + p.ContainerStartDelay)
	for _, n := range nodes {
		n.started = pc.waitPod(n.pod, "Running and Ready", isRunningAndReady)
		n.before = &corev1.Node{}
		if err := pc.env.Client.Get(ctx, client.ObjectKey{Name: n.name}, n.before); err != nil {
			t.Fatal(err)
		}
	}

	errs, err := c.StopInstances(ctx, []string{marked.ID, unmarked.ID}, true)
	if err != nil || len(errs) != 0 {
		t.Fatalf("hibernating: %v %v", errs, err)
	}
	clk.Step(p.HibernateDelay)
	for _, n := range nodes {
		// A frozen kubelet writes nothing to its pods.
		if rv := pc.settle(n.pod); pc.pod(n.pod).ResourceVersion != rv {
			t.Errorf("the frozen kubelet wrote pod %s", n.pod.Name)
		}
	}
	markUnknown(t, pc, nodes[0].name, nodes[0].pod)

	if errs, err := c.StartInstances(ctx, []string{marked.ID, unmarked.ID}); err != nil || len(errs) != 0 {
		t.Fatalf("starting: %v %v", errs, err)
	}
	clk.Step(p.StartDelay + p.HibernateResumeDelay)
	thawedAt := clk.Now()
	for _, n := range nodes {
		var after *corev1.Node
		pc.waitNode(n.name, "reported after the thaw", func(node *corev1.Node) bool {
			after = node
			r := ready(node)
			return r.Status == corev1.ConditionTrue && !r.LastHeartbeatTime.Time.Before(thawedAt.Truncate(time.Second))
		})
		if got, want := after.Status.NodeInfo.BootID, n.before.Status.NodeInfo.BootID; got != want {
			t.Errorf("%s: boot ID %s after the resume, want %s: a resume is no boot", n.name, got, want)
		}
		pod := pc.waitPod(n.pod, "Running and Ready again", isRunningAndReady)
		got, want := pod.Status.ContainerStatuses[0], n.started.Status.ContainerStatuses[0]
		if got.ContainerID != want.ContainerID || got.RestartCount != 0 || !got.State.Running.StartedAt.Equal(&want.State.Running.StartedAt) {
			t.Errorf("%s: container %s restarted %d times, started %s; want %s, never restarted, started %s",
				n.pod.Name, got.ContainerID, got.RestartCount, got.State.Running.StartedAt, want.ContainerID, want.State.Running.StartedAt)
		}
	}

	// The unmarked Node never showed anything but Ready: the kubelet did not shut down.
	var after corev1.Node
	if err := pc.env.Client.Get(ctx, client.ObjectKey{Name: nodes[1].name}, &after); err != nil {
		t.Fatal(err)
	}
	if got, want := ready(&after).LastTransitionTime, ready(nodes[1].before).LastTransitionTime; !got.Equal(&want) {
		t.Errorf("the unmarked Node's Ready changed at %s: it was reported not Ready meanwhile", got)
	}
	// The marked one turned Ready when the kubelet thawed.
	if err := pc.env.Client.Get(ctx, client.ObjectKey{Name: nodes[0].name}, &after); err != nil {
		t.Fatal(err)
	}
	if got := ready(&after).LastTransitionTime.Time; !got.Equal(thawedAt.Truncate(time.Second)) {
		t.Errorf("the marked Node turned Ready at %s, want at the thaw, %s", got, thawedAt)
	}
}

// markUnknown does what kube-controller-manager's node lifecycle controller does to a
// Node that stopped reporting: its Ready condition Unknown, and its pods not Ready.
func markUnknown(t *testing.T, pc *podCluster, nodeName string, pod client.ObjectKey) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{}
	if err := pc.env.Client.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		t.Fatal(err)
	}
	base := node.DeepCopy()
	r := ready(node)
	r.Status, r.Reason, r.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	r.LastTransitionTime = metav1.NewTime(pc.clk.Now())
	if err := pc.env.Client.Status().Patch(ctx, node, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	p := pc.pod(pod)
	podBase := p.DeepCopy()
	for n := range p.Status.Conditions {
		if p.Status.Conditions[n].Type == corev1.PodReady {
			p.Status.Conditions[n].Status = corev1.ConditionFalse
			p.Status.Conditions[n].LastTransitionTime = metav1.NewTime(pc.clk.Now())
		}
	}
	if err := pc.env.Client.Status().Patch(ctx, p, client.MergeFrom(podBase)); err != nil {
		t.Fatal(err)
	}
}
