// Package pdbs tells whether pods can be evicted now under their PodDisruptionBudgets,
// by the rules the eviction API applies (k8s.io/kubernetes, pkg/registry/core/pod/
// storage/eviction.go), so that disruption chooses only nodes whose drain the API server
// will let through. It counts the evictions a decision plans, and those already under
// way, against each budget's disruptionsAllowed: two nodes whose pods share a budget
// that allows one disruption are not both chosen. It is pure: the budgets come from the
// cluster state.
package pdbs

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/internal/podutil"
)

// maxDisruptedPods is the eviction API's MaxDisruptedPodSize: a budget with more
// evictions its controller has not confirmed refuses any more.
const maxDisruptedPods = 2000

// Set is a cluster's PodDisruptionBudgets, with their selectors read.
type Set struct {
	byNamespace map[string][]guard
}

type guard struct {
	pdb      *policyv1.PodDisruptionBudget
	selector labels.Selector
}

// NewSet reads the budgets' selectors once. A selector that cannot be read matches no
// pod, and an empty one every pod of its namespace, as for the eviction API.
func NewSet(budgets []*policyv1.PodDisruptionBudget) Set {
	s := Set{byNamespace: map[string][]guard{}}
	for _, pdb := range budgets {
		selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		s.byNamespace[pdb.Namespace] = append(s.byNamespace[pdb.Namespace], guard{pdb: pdb, selector: selector})
	}
	for _, guards := range s.byNamespace {
		slices.SortFunc(guards, func(a, b guard) int { return cmp.Compare(a.pdb.Name, b.pdb.Name) })
	}
	return s
}

// guarding returns the budgets of the pod's namespace whose selector matches it.
func (s Set) guarding(pod *corev1.Pod) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, g := range s.byNamespace[pod.Namespace] {
		if g.selector.Matches(labels.Set(pod.Labels)) {
			out = append(out, g.pdb)
		}
	}
	return out
}

// Blocked says why a pod cannot be evicted now.
type Blocked struct {
	Pod *corev1.Pod
	// Budgets names the budgets that hold it, namespace/name.
	Budgets []string
	// Why is what the budget says, in the words of the Event and the condition.
	Why string
}

// String is "Pod default/web-0 cannot be evicted now: PodDisruptionBudget default/web
// allows no disruption (…)".
func (b *Blocked) String() string {
	return fmt.Sprintf("Pod %s/%s cannot be evicted now: %s", b.Pod.Namespace, b.Pod.Name, b.Why)
}

// Evictions counts the disruptions planned evictions take from each budget.
type Evictions struct {
	set   Set
	taken map[types.NamespacedName]int32
}

// Evictions starts a count with nothing taken.
func (s Set) Evictions() *Evictions {
	return &Evictions{set: s, taken: map[types.NamespacedName]int32{}}
}

// Commit counts the evictions of pods that happen whatever is decided now, such as the
// pods of nodes draining already: they take from their budgets first, allowed or not.
func (e *Evictions) Commit(pods []*corev1.Pod) {
	for _, pod := range pods {
		if pdb, _ := e.check(pod, e.taken); pdb != nil {
			e.taken[key(pdb)]++
		}
	}
}

// Take counts the evictions of pods when the budgets allow every one of them now, on top
// of those counted before, and returns nil. Otherwise it counts none and says why the
// first pod that cannot go (in namespace/name order) cannot.
func (e *Evictions) Take(pods []*corev1.Pod) *Blocked {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	taken := maps.Clone(e.taken)
	for _, pod := range pods {
		pdb, blocked := e.check(pod, taken)
		if blocked != nil {
			return blocked
		}
		if pdb != nil {
			taken[key(pdb)]++
		}
	}
	e.taken = taken
	return nil
}

// check decides one pod's eviction as the eviction API would, with taken disruptions
// of each budget already spoken for: it returns the budget the eviction takes one
// disruption from (nil when it takes none), or why it is refused.
func (e *Evictions) check(pod *corev1.Pod, taken map[types.NamespacedName]int32) (*policyv1.PodDisruptionBudget, *Blocked) {
	// A pod that is terminating, pending or finished is deleted without asking its budget.
	if !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodPending || podutil.Finished(pod) {
		return nil, nil
	}
	guards := e.set.guarding(pod)
	switch len(guards) {
	case 0:
		return nil, nil
	case 1:
	default:
		names := make([]string, len(guards))
		for i, pdb := range guards {
			names[i] = name(pdb)
		}
		return nil, &Blocked{Pod: pod, Budgets: names,
			Why: fmt.Sprintf("PodDisruptionBudgets %s all select it, and the eviction API refuses a pod that more than one budget selects", strings.Join(names, ", "))}
	}
	pdb := guards[0]
	used := taken[key(pdb)]
	status := pdb.Status
	if !ready(pod) {
		// An unhealthy pod goes without taking a disruption when the budget says so, or
		// while the application it belongs to is healthy enough without it.
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return nil, nil
		}
		if status.DesiredHealthy > 0 && status.CurrentHealthy-used >= status.DesiredHealthy {
			return nil, nil
		}
	}
	blocked := func(why string, args ...any) (*policyv1.PodDisruptionBudget, *Blocked) {
		return nil, &Blocked{Pod: pod, Budgets: []string{name(pdb)}, Why: "PodDisruptionBudget " + name(pdb) + " " + fmt.Sprintf(why, args...)}
	}
	switch {
	case status.ObservedGeneration < pdb.Generation:
		return blocked("changed and its controller has not counted its pods since")
	case status.DisruptionsAllowed < 0:
		return blocked("allows a negative number of disruptions")
	case len(status.DisruptedPods) > maxDisruptedPods:
		return blocked("has more evictions its controller has not confirmed than the eviction API accepts")
	case status.DisruptionsAllowed == 0:
		return blocked("allows no disruption (it needs %d healthy pods and has %d)", status.DesiredHealthy, status.CurrentHealthy)
	case status.DisruptionsAllowed <= used:
		return blocked("allows %d disruptions, and other pods going at the same time take them all", status.DisruptionsAllowed)
	}
	return pdb, nil
}

// ready reports whether the pod's Ready condition is True: the eviction API's healthy.
func ready(pod *corev1.Pod) bool {
	c := podutil.Condition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func name(pdb *policyv1.PodDisruptionBudget) string { return pdb.Namespace + "/" + pdb.Name }

func key(pdb *policyv1.PodDisruptionBudget) types.NamespacedName {
	return types.NamespacedName{Namespace: pdb.Namespace, Name: pdb.Name}
}
