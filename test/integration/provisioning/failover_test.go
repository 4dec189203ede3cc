package provisioning_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// A leader that goes away between a launch and its pod turning Ready leaves the pod's
// measure to the next one. The new leader looks at once, though no pod waits and its
// resync is an hour off; it relearns the pod placed on the launched claim, takes the
// running milestone the leader before observed as done, and observes Ready once, under
// the cold path, at the time the pod's own conditions tell.
func TestANewLeaderMeasuresThePodTheLeaderBeforePlaced(t *testing.T) {
	f := stack.NewSerialFixture(t, nil)
	f.Pool("failover", 0, func(p *v1beta1.NodePool) {
		p.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/team": "failover"}
	})
	beforeRunning, beforeReady := startupOf(t, "cold", "running"), startupOf(t, "cold", "ready")

	// The pod turns Ready only once the test sets its readiness gate's condition.
	const gate = corev1.PodConditionType("example.com/warmed-up")
	pod := pendingPods(f, "default", "failover", 1, "100m", "128Mi", func(p *corev1.Pod) {
		p.Spec.NodeSelector = map[string]string{"example.com/team": "failover"}
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	})[0]
	key := client.ObjectKeyFromObject(pod)
	get := func() *corev1.Pod {
		if err := f.Env.Client.Get(f.Ctx, key, pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	f.Eventually("a claim of the pool is launched", func() bool { return len(f.Claims("failover")) == 1 })
	launched := f.WaitForClaim(f.Claims("failover")[0].Name, v1beta1.PhaseRunning)
	bind(f, pod, launched.Status.NodeName)
	f.Eventually("the pod runs, not Ready behind its gate", func() bool {
		p := get()
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	f.Eventually("the leader observes the pod running", func() bool {
		return startupOf(t, "cold", "running").count == beforeRunning.count+1
	})
	if meta.IsStatusConditionTrue(podConditions(get()), string(corev1.PodReady)) {
		t.Fatal("the pod is Ready before its gate opened")
	}

	// The leader goes away. The next one's resync is an hour off and no pod waits, so
	// only a first look of its own, at once, can relearn the pod.
	f.Op.Stop()
	decisions := stack.CounterTotal(t, "stratos_provisioning_decisions_total")
	opts := f.Opts
	opts.Provisioning.Resync = time.Hour
	f.Op = stack.StartOperator(t, f.Env, f.Cloud, opts)
	f.Eventually("the new leader looks at the cluster at once", func() bool {
		return stack.CounterTotal(t, "stratos_provisioning_decisions_total") > decisions
	})

	// The gate opens: the pod turns Ready under the new leader.
	open := get().DeepCopy()
	open.Status.Conditions = append(open.Status.Conditions, corev1.PodCondition{Type: gate, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
	if err := f.Env.Client.Status().Patch(f.Ctx, open, client.StrategicMergeFrom(pod)); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the pod is Ready", func() bool {
		return meta.IsStatusConditionTrue(podConditions(get()), string(corev1.PodReady))
	})
	f.Eventually("the new leader observes the pod Ready", func() bool {
		return startupOf(t, "cold", "ready").count > beforeReady.count
	})
	bounds := stack.Metric(t, "stratos_pod_startup_duration_seconds", nil).GetHistogram().GetBucket()
	running, ready := expectedStartup(t, get())
	t.Logf("running after %.1fs (the leader before), Ready after %.1fs (the new leader)", running, ready)
	wantOne(t, "running, across both leaders", beforeRunning, startupOf(t, "cold", "running"), running, bounds)
	wantOne(t, "ready", beforeReady, startupOf(t, "cold", "ready"), ready, bounds)
	// One pod on one claim: nothing could take its room, so provisioning gave it no
	// reservation, and the new leader relearned it from its Node, launched after it.
	// Tolerations only grow: none now means none ever.
	if slices.ContainsFunc(get().Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == v1beta1.TaintReservedKey }) {
		t.Errorf("the lone pod was given a reservation: %v", get().Spec.Tolerations)
	}
}
