package scheduling

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// slot is where the verifier finds pods after a simulation: a node, a claim or a launch.
type slot struct {
	name        string
	zone        string // "" when a launch may go to any zone
	labels      map[string]string
	taints      []corev1.Taint
	allocatable resources
	existing    []*corev1.Pod
	placed      []*corev1.Pod
}

func (s *slot) all() []*corev1.Pod {
	return append(append([]*corev1.Pod(nil), s.existing...), s.placed...)
}

// verify reports every violation found in a result.
func verify(t *testing.T, in Input, r Result) {
	t.Helper()
	for _, v := range violations(t, in, r) {
		t.Error(v)
	}
}

// violations checks a result against the input from scratch, without the simulation's
// data structures: every pod is placed once or reported, and every placement keeps the
// predicates for the final state of its node.
func violations(t *testing.T, in Input, r Result) []string {
	t.Helper()
	v := &collector{}
	slots := map[string]*slot{}
	for _, n := range in.Nodes {
		slots[n.Node.Name] = &slot{name: n.Node.Name, zone: n.Node.Labels[corev1.LabelTopologyZone], labels: n.Node.Labels, taints: n.Node.Spec.Taints,
			allocatable: fromList(n.Node.Status.Allocatable), existing: n.Pods}
	}
	for _, c := range in.Claims {
		slots[c.Claim.Name] = &slot{name: c.Claim.Name, zone: c.Labels[corev1.LabelTopologyZone], labels: c.Labels, taints: c.Taints,
			allocatable: fromList(c.Allocatable), existing: c.Pods}
	}
	seen := map[*corev1.Pod]int{}
	for pod, node := range r.Existing {
		slots[node].placed = append(slots[node].placed, pod)
		seen[pod]++
	}
	for pod, claim := range r.InFlight {
		slots[claim].placed = append(slots[claim].placed, pod)
		seen[pod]++
	}
	for _, s := range r.Starts {
		slots[s.Claim].placed = append(slots[s.Claim].placed, s.Pods...)
		for _, pod := range s.Pods {
			seen[pod]++
		}
	}
	for i, l := range r.Launches {
		sl := launchSlot(t, in, l)
		sl.name = fmt.Sprintf("launch-%d(%s)", i, l.Pool)
		slots[sl.name] = sl
		var sum resources
		for _, pod := range l.Pods {
			seen[pod]++
			r := podRequests(pod)
			sum.add(&r)
		}
		if !equality.Semantic.DeepEqual(toList(sum), l.Requests) {
			v.Errorf("launch %d: requests %v, but its pods sum to %v", i, l.Requests, toList(sum))
		}
	}
	for _, u := range r.Unschedulable {
		seen[u.Pod]++
	}
	for _, pod := range in.Pods {
		if seen[pod] != 1 {
			v.Errorf("pod %s is in the result %d times", pod.Name, seen[pod])
		}
	}
	for _, sl := range slots {
		checkSlot(t, v, sl, slots)
	}
	return v.found
}

// collector gathers violations.
type collector struct{ found []string }

func (c *collector) Errorf(format string, args ...any) {
	c.found = append(c.found, fmt.Sprintf(format, args...))
}

// launchSlot is the node a launch makes: its cheapest type, in its zone when one.
func launchSlot(t *testing.T, in Input, l Launch) *slot {
	t.Helper()
	var pool *Pool
	for i := range in.Pools {
		if in.Pools[i].Pool.Name == l.Pool {
			pool = &in.Pools[i]
		}
	}
	if pool == nil || len(l.InstanceTypes) == 0 {
		t.Fatalf("launch from unknown pool %q or without types", l.Pool)
	}
	var it *cloudprovider.InstanceType
	for _, candidate := range pool.InstanceTypes {
		if candidate.Name == l.InstanceTypes[0] {
			it = candidate
		}
	}
	sl := &slot{placed: l.Pods}
	if len(l.Zones) == 1 {
		sl.zone = l.Zones[0]
	}
	offer := it.Offerings[0]
	for _, o := range it.Offerings {
		if o.Available && (sl.zone == "" || o.Zone == sl.zone) {
			offer = o
			break
		}
	}
	sl.labels = it.Labels(offer)
	for k, v := range pool.Pool.Spec.Template.Labels {
		sl.labels[k] = string(v)
	}
	if sl.zone == "" {
		delete(sl.labels, corev1.LabelTopologyZone) // any zone: node affinity on zones was not asked
	}
	for _, taint := range pool.Pool.Spec.Template.Taints {
		sl.taints = append(sl.taints, taint.Core())
	}
	sl.allocatable = fromList(it.Allocatable())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: it.Labels(offer)}, Spec: corev1.NodeSpec{Taints: sl.taints}}
	for _, ds := range in.DaemonSets {
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(ds).Match(node); ok && tolerates(ds.Spec.Tolerations, sl.taints) {
			r := podRequests(ds)
			sl.allocatable.sub(&r)
		}
	}
	return sl
}

func checkSlot(t *testing.T, v *collector, sl *slot, slots map[string]*slot) {
	t.Helper()
	var used resources
	for _, pod := range sl.all() {
		r := podRequests(pod)
		used.add(&r)
	}
	if len(sl.placed) > 0 && !used.fits(&sl.allocatable) {
		v.Errorf("%s holds more than it has: %+v > %+v", sl.name, used, sl.allocatable)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: sl.labels}}
	var ports []hostPort
	for _, pod := range sl.all() {
		for _, p := range hostPorts(pod) {
			for _, q := range ports {
				if p.conflicts(q) {
					v.Errorf("%s: host port %d taken twice", sl.name, p.port)
				}
			}
			ports = append(ports, p)
		}
	}
	for _, pod := range sl.placed {
		if !tolerates(pod.Spec.Tolerations, sl.taints) {
			v.Errorf("pod %s on %s does not tolerate its taints", pod.Name, sl.name)
		}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok && !zoneOnlyAffinity(pod, sl) {
			v.Errorf("pod %s on %s does not match its labels %v", pod.Name, sl.name, sl.labels)
		}
		checkTopology(t, v, pod, sl, slots)
	}
}

// zoneOnlyAffinity accepts a pod whose node affinity only fails on the zone of a launch
// whose zone is left open: the launch's Zones then carry the pod's zones.
func zoneOnlyAffinity(pod *corev1.Pod, sl *slot) bool {
	return sl.zone == "" && pod.Spec.NodeSelector[corev1.LabelTopologyZone] == ""
}

// checkTopology checks the pod's hard topology spread and pod (anti-)affinity terms.
func checkTopology(t *testing.T, v *collector, pod *corev1.Pod, sl *slot, slots map[string]*slot) {
	t.Helper()
	count := func(sel labels.Selector, inSlot bool) (here, others int, byZone map[string]int) {
		byZone = map[string]int{}
		for _, other := range slots {
			for _, q := range other.all() {
				if q == pod || q.Namespace != pod.Namespace || !sel.Matches(labels.Set(q.Labels)) {
					continue
				}
				if other == sl && inSlot {
					here++
				}
				others++
				if other.zone != "" {
					byZone[other.zone]++
				}
			}
		}
		return here, others, byZone
	}
	selector := func(ls *metav1.LabelSelector) labels.Selector {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		here, _, byZone := count(selector(c.LabelSelector), true)
		switch c.TopologyKey {
		case corev1.LabelHostname:
			if here+1 > int(c.MaxSkew) {
				v.Errorf("pod %s on %s: %d matching pods share its node, over maxSkew %d", pod.Name, sl.name, here+1, c.MaxSkew)
			}
		case corev1.LabelTopologyZone:
			if sl.zone == "" {
				v.Errorf("pod %s spreads over zones but %s has no zone", pod.Name, sl.name)
			}
			byZone[sl.zone]++
			lo, hi := 1<<30, 0
			for _, z := range []string{"zone-a", "zone-b", "zone-c"} {
				lo, hi = min(lo, byZone[z]), max(hi, byZone[z])
			}
			if hi-lo > int(c.MaxSkew) {
				v.Errorf("pod %s: zone counts %v skew more than %d", pod.Name, byZone, c.MaxSkew)
			}
		}
	}
	a := pod.Spec.Affinity
	if a == nil {
		return
	}
	if a.PodAffinity != nil {
		for _, term := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			here, others, byZone := count(selector(term.LabelSelector), true)
			if others == 0 {
				continue // alone in its group: the first pod goes anywhere
			}
			if (term.TopologyKey == corev1.LabelHostname && here == 0) || (term.TopologyKey == corev1.LabelTopologyZone && (sl.zone == "" || byZone[sl.zone] == 0)) {
				v.Errorf("pod %s on %s (zone %q) has no matching pod in its %s", pod.Name, sl.name, sl.zone, term.TopologyKey)
			}
		}
	}
	if a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			here, _, byZone := count(selector(term.LabelSelector), true)
			if (term.TopologyKey == corev1.LabelHostname && here > 0) || (term.TopologyKey == corev1.LabelTopologyZone && byZone[sl.zone] > 0) {
				v.Errorf("pod %s on %s shares its %s with a pod it repels", pod.Name, sl.name, term.TopologyKey)
			}
		}
	}
}
