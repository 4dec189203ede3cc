package pdbs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func pod(name string, app string, tune ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}},
	}
	for _, t := range tune {
		t(p)
	}
	return p
}

func unready(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

// budget guards app with allowed disruptions, as its controller counted healthy of
// desired pods.
func budget(name, app string, allowed, healthy, desired int32, tune ...func(*policyv1.PodDisruptionBudget)) *policyv1.PodDisruptionBudget {
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed,
			CurrentHealthy: healthy, DesiredHealthy: desired},
	}
	for _, t := range tune {
		t(b)
	}
	return b
}

// Each rule of the eviction API, one pod at a time.
func TestTakeDecidesAsTheEvictionAPI(t *testing.T) {
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) }
	pending := func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }
	succeeded := func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }
	otherNamespace := func(p *corev1.Pod) { p.Namespace = "other" }
	alwaysAllow := func(b *policyv1.PodDisruptionBudget) {
		b.Spec.UnhealthyPodEvictionPolicy = ptr.To(policyv1.AlwaysAllow)
	}
	stale := func(b *policyv1.PodDisruptionBudget) { b.Generation = 2 }
	everything := func(b *policyv1.PodDisruptionBudget) { b.Spec.Selector = &metav1.LabelSelector{} }
	nothing := func(b *policyv1.PodDisruptionBudget) { b.Spec.Selector = nil }
	badSelector := func(b *policyv1.PodDisruptionBudget) {
		b.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	}
	unconfirmed := func(b *policyv1.PodDisruptionBudget) {
		b.Status.DisruptedPods = map[string]metav1.Time{}
		for i := range maxDisruptedPods + 1 {
			b.Status.DisruptedPods[strings.Repeat("p", i+1)] = metav1.Time{}
		}
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		budgets []*policyv1.PodDisruptionBudget
		blocked string // a part of the reason, or "" when the eviction is allowed
	}{
		{"no budget", pod("web-0", "web"), nil, ""},
		{"a budget of another app", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("db", "db", 0, 1, 1)}, ""},
		{"a budget in another namespace", pod("web-0", "web", otherNamespace), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1)}, ""},
		{"a budget that allows one", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 2, 1)}, ""},
		{"a budget that allows none", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1)}, "default/web allows no disruption (it needs 1 healthy pods and has 1)"},
		{"a negative allowance", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("web", "web", -1, 1, 1)}, "negative"},
		{"a budget changed and not counted since", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 2, 1, stale)}, "has not counted"},
		{"too many unconfirmed evictions", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("web", "web", 1, 2, 1, unconfirmed)}, "not confirmed"},
		{"two budgets", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("a", "web", 1, 2, 1), budget("b", "web", 1, 2, 1)}, "default/a, default/b all select it"},
		{"an empty selector selects every pod", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("all", "", 0, 1, 1, everything)}, "default/all allows no disruption"},
		{"a missing selector selects none", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("none", "", 0, 1, 1, nothing)}, ""},
		{"a selector that cannot be read selects none", pod("web-0", "web"), []*policyv1.PodDisruptionBudget{budget("bad", "", 0, 1, 1, badSelector)}, ""},
		{"a terminating pod", pod("web-0", "web", deleting), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1)}, ""},
		{"a pending pod", pod("web-0", "web", pending), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1)}, ""},
		{"a finished pod", pod("web-0", "web", succeeded), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 1)}, ""},
		{"an unready pod under AlwaysAllow", pod("web-0", "web", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 0, 1, alwaysAllow)}, ""},
		{"an unready pod of a healthy application", pod("web-1", "web", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 2, 2)}, ""},
		{"an unready pod of an unhealthy application", pod("web-1", "web", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 1, 2)}, "allows no disruption"},
		{"an unready pod of a budget that wants no pod", pod("web-1", "web", unready), []*policyv1.PodDisruptionBudget{budget("web", "web", 0, 0, 0)}, "allows no disruption"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocked := NewSet(tc.budgets).Evictions().Take([]*corev1.Pod{tc.pod})
			switch {
			case tc.blocked == "" && blocked != nil:
				t.Fatalf("refused: %s", blocked)
			case tc.blocked != "" && blocked == nil:
				t.Fatalf("allowed, want refused for %q", tc.blocked)
			case blocked != nil && !strings.Contains(blocked.String(), tc.blocked):
				t.Fatalf("refused with %q, want it to say %q", blocked, tc.blocked)
			}
		})
	}
}

// A budget that allows one disruption lets one of its pods go, not two: neither in one
// decision nor across two, nor while a pod of a draining node waits for it.
func TestEvictionsAreCountedAgainstTheirBudget(t *testing.T) {
	set := NewSet([]*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 2)})
	a, b := pod("web-a", "web"), pod("web-b", "web")

	if blocked := set.Evictions().Take([]*corev1.Pod{a, b}); blocked == nil || blocked.Pod != b ||
		!strings.Contains(blocked.Why, "allows 1 disruptions, and other pods going at the same time take them all") {
		t.Fatalf("two pods of one decision against one disruption: %v", blocked)
	}

	e := set.Evictions()
	if blocked := e.Take([]*corev1.Pod{a}); blocked != nil {
		t.Fatal(blocked)
	}
	if blocked := e.Take([]*corev1.Pod{b}); blocked == nil {
		t.Fatal("the second decision took the disruption the first one took")
	}

	e = set.Evictions()
	e.Commit([]*corev1.Pod{a})
	if blocked := e.Take([]*corev1.Pod{b}); blocked == nil {
		t.Fatal("a decision took the disruption a draining node's pod needs")
	}
}

// A refused Take counts nothing: the pods before the one refused do not keep their share.
func TestARefusedTakeTakesNothing(t *testing.T) {
	set := NewSet([]*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 2), budget("db", "db", 0, 1, 1)})
	e := set.Evictions()
	if blocked := e.Take([]*corev1.Pod{pod("web-a", "web"), pod("db-0", "db")}); blocked == nil {
		t.Fatal("the db pod's budget allows no disruption")
	}
	if blocked := e.Take([]*corev1.Pod{pod("web-a", "web")}); blocked != nil {
		t.Fatalf("the refused decision kept its share of the web budget: %s", blocked)
	}
}

// Unready pods go free while the application stays healthy without them: not once the
// evictions counted would leave it short.
func TestAnUnreadyPodCountsTheEvictionsBeforeIt(t *testing.T) {
	set := NewSet([]*policyv1.PodDisruptionBudget{budget("web", "web", 1, 3, 3)})
	e := set.Evictions()
	if blocked := e.Take([]*corev1.Pod{pod("web-0", "web", unready)}); blocked != nil {
		t.Fatalf("3 of 3 healthy: an unready pod goes free: %s", blocked)
	}
	e.Commit([]*corev1.Pod{pod("web-a", "web")})
	if blocked := e.Take([]*corev1.Pod{pod("web-1", "web", unready)}); blocked == nil {
		t.Fatal("with one healthy pod leaving, the application is short: the unready pod needs a disruption, and none is left")
	}
}
