package scheduling

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// termKind is what a topology term asks.
type termKind int

const (
	// spread: topology spread — the pod's domain may hold at most maxSkew more matching
	// pods than the emptiest domain.
	spread termKind = iota
	// affinity: the pod's domain must hold a matching pod.
	affinity
	// antiAffinity: the pod's domain must hold no matching pod.
	antiAffinity
)

// term is one topology constraint of a pod, over the hostname or the zone.
type term struct {
	kind    termKind
	group   int
	zonal   bool // false: hostname
	maxSkew int32
	// honorAffinity and honorTaints are a spread term's node inclusion policies: whether
	// only the nodes the pod's node affinity accepts, and whose taints it tolerates, count.
	honorAffinity, honorTaints bool
}

// group counts the pods that match a label selector in some namespaces, per node and
// per zone. Several terms of several pods share a group when they select alike.
type group struct {
	namespaces map[string]bool // nil: every namespace
	selector   labels.Selector
	// zone counts matching pods per zone index; total counts them everywhere.
	zone  []int32
	total int32
	// antiZone counts, per zone, pods that hold a zonal anti-affinity term on this
	// group: a matching pod must keep out of those zones.
	antiZone []int32
	// zonal is true when a zonal term refers to the group: then the zone of every pod
	// matching it matters.
	zonal bool
}

// matches reports whether pod counts in the group.
func (g *group) matches(pod *corev1.Pod) bool {
	if g.namespaces != nil && !g.namespaces[pod.Namespace] {
		return false
	}
	return g.selector.Matches(labels.Set(pod.Labels))
}

// topology holds the groups and the zones of one simulation.
type topology struct {
	groups []*group
	byKey  map[string]int
	zones  []string
	zoneOf map[string]int
}

func newTopology() *topology {
	return &topology{byKey: map[string]int{}, zoneOf: map[string]int{}}
}

// zone returns the index of a zone, registering it; "" is no zone (-1).
func (t *topology) zone(name string) int {
	if name == "" {
		return -1
	}
	if i, ok := t.zoneOf[name]; ok {
		return i
	}
	t.zoneOf[name] = len(t.zones)
	t.zones = append(t.zones, name)
	for _, g := range t.groups {
		g.zone = append(g.zone, 0)
		g.antiZone = append(g.antiZone, 0)
	}
	return t.zoneOf[name]
}

// groupFor returns the group of a selector in some namespaces, registering it.
func (t *topology) groupFor(namespaces []string, selector labels.Selector, zonal bool) int {
	key := strings.Join(namespaces, ",") + "|" + selector.String()
	i, ok := t.byKey[key]
	if !ok {
		g := &group{selector: selector, zone: make([]int32, len(t.zones)), antiZone: make([]int32, len(t.zones))}
		if namespaces != nil {
			g.namespaces = map[string]bool{}
			for _, ns := range namespaces {
				g.namespaces[ns] = true
			}
		}
		i = len(t.groups)
		t.groups = append(t.groups, g)
		t.byKey[key] = i
	}
	t.groups[i].zonal = t.groups[i].zonal || zonal
	return i
}

// topologyKeys the simulation knows: the hostname and the zone. Constraints over other
// keys are left to kube-scheduler.
func zonalKey(key string) (zonal, known bool) {
	switch key {
	case corev1.LabelHostname:
		return false, true
	case corev1.LabelTopologyZone:
		return true, true
	default:
		return false, false
	}
}

// termsOf registers a pod's topology constraints and returns them, hard and soft.
func (t *topology) termsOf(pod *corev1.Pod) (hard, soft []term) {
	for _, c := range pod.Spec.TopologySpreadConstraints {
		zonal, known := zonalKey(c.TopologyKey)
		if !known || c.LabelSelector == nil {
			continue
		}
		selector, err := selectorWithKeys(c.LabelSelector, c.MatchLabelKeys, pod)
		if err != nil {
			continue
		}
		tm := term{
			kind: spread, group: t.groupFor([]string{pod.Namespace}, selector, zonal), zonal: zonal, maxSkew: max(c.MaxSkew, 1),
			honorAffinity: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor,
			honorTaints:   c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor,
		}
		if c.WhenUnsatisfiable == corev1.ScheduleAnyway {
			soft = append(soft, tm)
		} else {
			hard = append(hard, tm)
		}
	}
	a := pod.Spec.Affinity
	if a == nil {
		return hard, soft
	}
	add := func(terms []corev1.PodAffinityTerm, kind termKind, into *[]term) {
		for _, pt := range terms {
			zonal, known := zonalKey(pt.TopologyKey)
			if !known {
				continue
			}
			selector, err := selectorWithKeys(pt.LabelSelector, pt.MatchLabelKeys, pod)
			if err != nil {
				continue
			}
			*into = append(*into, term{kind: kind, group: t.groupFor(termNamespaces(pt, pod), selector, zonal), zonal: zonal})
		}
	}
	weighted := func(terms []corev1.WeightedPodAffinityTerm) []corev1.PodAffinityTerm {
		out := make([]corev1.PodAffinityTerm, 0, len(terms))
		for _, w := range terms {
			out = append(out, w.PodAffinityTerm)
		}
		return out
	}
	if a.PodAffinity != nil {
		add(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, affinity, &hard)
		add(weighted(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution), affinity, &soft)
	}
	if a.PodAntiAffinity != nil {
		add(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, antiAffinity, &hard)
		add(weighted(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution), antiAffinity, &soft)
	}
	return hard, soft
}

// termNamespaces are the namespaces a pod affinity term looks in: its own list, every
// namespace for an empty namespace selector, else the pod's namespace.
func termNamespaces(pt corev1.PodAffinityTerm, pod *corev1.Pod) []string {
	if len(pt.Namespaces) > 0 {
		ns := append([]string(nil), pt.Namespaces...)
		sort.Strings(ns)
		return ns
	}
	if pt.NamespaceSelector != nil && len(pt.NamespaceSelector.MatchLabels) == 0 && len(pt.NamespaceSelector.MatchExpressions) == 0 {
		return nil
	}
	return []string{pod.Namespace}
}

// selectorWithKeys is a label selector narrowed, as matchLabelKeys asks, to the pod's
// own values of some labels.
func selectorWithKeys(ls *metav1.LabelSelector, keys []string, pod *corev1.Pod) (labels.Selector, error) {
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		value, ok := pod.Labels[key]
		if !ok {
			continue
		}
		req, err := labels.NewRequirement(key, selection.Equals, []string{value})
		if err != nil {
			return nil, err
		}
		selector = selector.Add(*req)
	}
	return selector, nil
}

// match records which groups a pod counts in.
func (t *topology) match(pod *corev1.Pod) []int {
	var out []int
	for i, g := range t.groups {
		if g.matches(pod) {
			out = append(out, i)
		}
	}
	return out
}
