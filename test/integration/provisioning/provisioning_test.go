package provisioning_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/test/stack"
)

// xlargeClass launches only m5.xlarge: 4 vCPU, of which 3.92 are allocatable.
func xlargeClass(f *stack.Fixture) {
	f.Create(&v1beta1.FakeNodeClass{ObjectMeta: metav1.ObjectMeta{Name: "xlarge"}, Spec: v1beta1.FakeNodeClassSpec{InstanceTypes: []string{"m5.xlarge"}}})
}

// decisions counts the provisioning decisions this process made so far.
func decisions(t *testing.T) uint64 {
	return stack.Metric(t, "stratos_provisioning_duration_seconds", nil).GetHistogram().GetSampleCount()
}

// waitForADecision marks pods Unschedulable again and waits until provisioning decided.
func waitForADecision(f *stack.Fixture, pods []*corev1.Pod) {
	f.T.Helper()
	before := decisions(f.T)
	for _, pod := range pods {
		f.MarkUnschedulable(pod)
	}
	f.Eventually("provisioning decides again", func() bool { return decisions(f.T) > before })
}

// Twenty 1-CPU pods against five standby 4-CPU nodes: the five start first (three pods
// each) and the five pods left launch two nodes cold. Later batches for the same pods
// scale nothing up, whether the nodes are still coming, running, or running for longer
// than the grace for binding.
func TestStandbyNodesStartFirstAndTheRestLaunchCold(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	// The test creates and marks the pods one by one; a wide window decides for all of
	// them at once, which is what it checks.
	f.Opts.Provisioning = provisioning.Options{BatchIdle: time.Second, BatchMax: 5 * time.Second}
	f.RestartOperator(f.Opts)
	xlargeClass(f)
	f.Pool("web", 5, func(p *v1beta1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "xlarge" })
	standby := f.WaitForPhase("web", 5, v1beta1.PhaseStandby)

	pods := pendingPods(f, "default", "web", 20, "1", "1Gi", nil)
	f.Eventually("the standby nodes are asked to run and two claims are launched", func() bool {
		return len(claimsAskedToRun(f, "web")) == 7
	})
	var cold []v1beta1.NodeClaim
	for _, c := range claimsAskedToRun(f, "web") {
		if !slices.ContainsFunc(standby, func(s v1beta1.NodeClaim) bool { return s.Name == c.Name }) {
			cold = append(cold, c)
		}
	}
	if len(cold) != 2 {
		t.Fatalf("%d cold launches, want 2", len(cold))
	}
	for _, c := range cold {
		if c.Spec.Resources.Requests.Cpu().Cmp(resource.MustParse("2")) < 0 || !slices.ContainsFunc(c.Spec.Requirements, func(r v1beta1.NodeSelectorRequirement) bool {
			return r.Key == corev1.LabelInstanceTypeStable && slices.Contains(r.Values, "m5.xlarge")
		}) {
			t.Errorf("cold claim %s: requests %v, requirements %v", c.Name, c.Spec.Resources.Requests, c.Spec.Requirements)
		}
	}

	// While the nodes come up, the pods are nominated to them.
	waitForADecision(f, pods)
	if n := len(claimsAskedToRun(f, "web")); n != 7 {
		t.Fatalf("a second batch for the same pods made %d claims run, want still 7", n)
	}

	// Once they run, the pods count on their Nodes while kube-scheduler binds them; after
	// the grace for binding, they are simulated again and fit in the Nodes' room.
	var lastRan time.Time
	for _, c := range claimsAskedToRun(f, "web") {
		ran := f.WaitForClaim(c.Name, v1beta1.PhaseRunning).Status.LastPhaseChangeTime.Time
		if ran.After(lastRan) {
			lastRan = ran
		}
	}
	waitForADecision(f, pods)
	if n := len(claimsAskedToRun(f, "web")); n != 7 {
		t.Fatalf("a batch after the nodes ran made %d claims run, want still 7", n)
	}
	f.Eventually("the grace for binding passes", func() bool { return time.Since(lastRan) > state.BindGrace })
	waitForADecision(f, pods)
	if n := len(claimsAskedToRun(f, "web")); n != 7 {
		t.Fatalf("a batch after the grace for binding made %d claims run, want still 7", n)
	}
	f.CheckInvariants()
}

// A pod whose node selector only pool B satisfies starts pool B's standby nodes only.
func TestNodeSelectorChoosesThePool(t *testing.T) {
	f := stack.NewFixture(t, nil)
	for _, team := range []string{"a", "b"} {
		f.Pool("team-"+team, 2, func(p *v1beta1.NodePool) {
			p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": v1beta1.LabelValue(team)}
		})
	}
	f.WaitForPhase("team-a", 2, v1beta1.PhaseStandby)
	f.WaitForPhase("team-b", 2, v1beta1.PhaseStandby)

	pendingPods(f, "default", "b-only", 1, "500m", "512Mi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"example.com/team": "b"}
	})
	f.Eventually("pool team-b starts a standby node", func() bool { return len(claimsAskedToRun(f, "team-b")) == 1 })
	if n := len(claimsAskedToRun(f, "team-a")); n != 0 {
		t.Fatalf("pool team-a started %d nodes for a pod that selects team b", n)
	}
	f.CheckInvariants()
}

// A pod no pool can take gets an Event naming, per pool, why; it is not simulated again
// until something changes, and a pool that fits it then provisions it.
func TestPodNoPoolFitsIsExplained(t *testing.T) {
	f := stack.NewFixture(t, nil)
	f.Pool("small", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}}
	})
	f.Pool("arm", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}
		p.Spec.Template.Spec.Taints = []v1beta1.Taint{{Key: "arm", Effect: corev1.TaintEffectNoSchedule}}
	})
	giant := pendingPods(f, "default", "giant", 1, "6", "8Gi", nil)[0]
	f.Eventually("the pod has an Event explaining why", func() bool {
		for _, note := range eventNotes(f, giant.Name, "NoNodePoolFits") {
			if containsAll(note, "NodePool small: no instance type holds the pod's requests (cpu 6", "NodePool arm: the pod does not tolerate the pool's taint arm:NoSchedule") {
				return true
			}
		}
		return false
	})

	// A pool that fits it makes provisioning look again, and launch for it.
	f.Pool("big", 0, nil)
	f.Eventually("the new pool launches a node for the pod", func() bool { return len(claimsAskedToRun(f, "big")) == 1 })
}
