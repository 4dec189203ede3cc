package warmpool_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// runningClaim makes a pool with one standby node and starts it.
func (f *fixture) runningClaim(pool string, tune func(*v1beta1.NodePool)) *v1beta1.NodeClaim {
	f.T.Helper()
	f.Pool(pool, 1, func(p *v1beta1.NodePool) {
		p.Spec.Standby.Max = ptr.To[int32](2)
		if tune != nil {
			tune(p)
		}
	})
	claim := f.WaitForPhase(pool, 1, v1beta1.PhaseStandby)[0]
	f.SetDesired(claim.Name, v1beta1.DesiredRunning)
	return f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
}

// guardedPod runs a Ready pod on a Node, guarded by a PodDisruptionBudget that allows no
// disruption. The simulated kubelet runs the pod; the test plays the disruption
// controller, which the harness does not run.
func (f *fixture) guardedPod(name, nodeName string) (*corev1.Pod, *policyv1.PodDisruptionBudget) {
	f.T.Helper()
	labels := map[string]string{"app": name}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:    nodeName,
			Containers:  []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
	}
	f.Create(pod)
	f.Eventually("the guarded pod runs and is Ready", func() bool {
		return f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), pod) == nil && podReady(pod)
	})
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	f.Create(pdb)
	f.setBudget(pdb, 0)
	return pod, pdb
}

// setBudget writes the status the disruption controller would: how many disruptions the
// budget allows now.
func (f *fixture) setBudget(pdb *policyv1.PodDisruptionBudget, allowed int32) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
		f.T.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1, DesiredHealthy: 1 - allowed, ExpectedPods: 1,
	}
	if err := f.Env.Client.Status().Update(f.Ctx, pdb); err != nil {
		f.T.Fatal(err)
	}
}

func (f *fixture) podGone(pod *corev1.Pod) bool {
	return apierrors.IsNotFound(f.Env.Client.Get(f.Ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
}

// Giving a node back drains it through the Eviction API: a budget that allows no
// disruption holds the drain until it allows one.
func TestDrainWaitsForThePodDisruptionBudget(t *testing.T) {
	f := newFixture(t, nil)
	claim := f.runningClaim("guarded", nil)
	pod, pdb := f.guardedPod("guarded", claim.Status.NodeName)

	f.SetDesired(claim.Name, v1beta1.DesiredStandby)
	f.Eventually("the drain reports the budget blocking it", func() bool { return f.EventSeen(claim.Name, nodeclaim.ReasonDrainBlocked) })
	// The Event is recorded during the pass whose status write ends it: the phase shows
	// Draining once that write lands, not at the Event.
	f.WaitForClaim(claim.Name, v1beta1.PhaseDraining)
	if f.podGone(pod) {
		t.Fatal("the guarded pod was removed while its budget allowed no disruption")
	}

	f.setBudget(pdb, 1)
	f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	if !f.podGone(pod) {
		t.Fatal("the node stood by with the pod still there")
	}
	f.CheckInvariants()
}

// After terminationGracePeriod a drain deletes the pods a budget still protects.
func TestTerminationGracePeriodForcesTheDrain(t *testing.T) {
	f := newFixture(t, nil)
	const timeout = 2 * time.Second
	claim := f.runningClaim("forced", func(p *v1beta1.NodePool) { p.Spec.Template.Spec.TerminationGracePeriod = v1beta1.NewDuration(timeout) })
	pod, _ := f.guardedPod("forced", claim.Status.NodeName)

	f.SetDesired(claim.Name, v1beta1.DesiredStandby)
	draining := f.WaitForClaim(claim.Name, v1beta1.PhaseDraining)
	f.WaitForClaim(claim.Name, v1beta1.PhaseStandby)
	if !f.podGone(pod) {
		t.Fatal("the pod is still there")
	}
	if took := time.Since(draining.Status.LastPhaseChangeTime.Time); took < timeout-time.Second {
		t.Fatalf("the drain was forced after %s, before the %s timeout", took, timeout)
	}
	f.CheckInvariants()
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return pod.Status.Phase == corev1.PodRunning && c.Status == corev1.ConditionTrue
		}
	}
	return false
}
