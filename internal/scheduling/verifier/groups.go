package verifier

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// podSet is the pods a term selects: a label selector over some namespaces.
type podSet struct {
	namespaces map[string]bool // nil: every namespace
	selector   labels.Selector
}

func (s podSet) has(pod *corev1.Pod) bool {
	return (s.namespaces == nil || s.namespaces[pod.Namespace]) && s.selector.Matches(labels.Set(pod.Labels))
}

func (s podSet) key() string {
	if s.namespaces == nil {
		return "*|" + s.selector.String()
	}
	ns := make([]string, 0, len(s.namespaces))
	for n := range s.namespaces {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return strings.Join(ns, ",") + "|" + s.selector.String()
}

// termSet is the pods a pod (anti-)affinity term of pod selects, as kube-scheduler reads
// it: the term's namespaces, every namespace for an empty namespace selector, else the
// pod's own; matchLabelKeys narrow the selector to the pod's values.
func termSet(pod *corev1.Pod, t corev1.PodAffinityTerm) (podSet, error) {
	selector, err := selectorOf(t.LabelSelector, t.MatchLabelKeys, pod)
	if err != nil {
		return podSet{}, err
	}
	s := podSet{selector: selector}
	switch ns := t.NamespaceSelector; {
	case ns != nil && len(ns.MatchLabels) == 0 && len(ns.MatchExpressions) == 0:
		return s, nil // every namespace
	case ns != nil:
		return s, fmt.Errorf("a namespace selector needs the namespaces' labels, which the verifier does not have")
	}
	s.namespaces = map[string]bool{}
	for _, n := range t.Namespaces {
		s.namespaces[n] = true
	}
	if len(s.namespaces) == 0 {
		s.namespaces[pod.Namespace] = true
	}
	return s, nil
}

// selectorOf converts a label selector (nil selects nothing, as in kube-scheduler) and
// adds, per key of matchLabelKeys the pod carries, the pod's value.
func selectorOf(ls *metav1.LabelSelector, matchLabelKeys []string, pod *corev1.Pod) (labels.Selector, error) {
	selector, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	for _, key := range matchLabelKeys {
		value, ok := pod.Labels[key]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(key, selection.In, []string{value})
		if err != nil {
			return nil, err
		}
		selector = selector.Add(*r)
	}
	return selector, nil
}

// group counts, per node, the bound pods that are in every one of its sets.
type group struct {
	sets    []podSet
	perNode []int
}

func (g *group) has(pod *corev1.Pod) bool {
	for _, s := range g.sets {
		if !s.has(pod) {
			return false
		}
	}
	return true
}

// antiTerm is the required anti-affinity terms of bound pods that select alike: the
// domains (values of key) where a pod of set may not go.
type antiTerm struct {
	set      podSet
	key      string
	occupied map[string]int
}

// binding is a pod bound to a node.
type binding struct {
	pod  *corev1.Pod
	node *node
}

// topology counts bound pods by group and keeps the bound pods' anti-affinity.
type topology struct {
	nodes    []*node
	bindings []binding
	groups   map[string]*group
	order    []*group
	anti     map[string]*antiTerm
	antiList []*antiTerm
	// domains caches, per topology key, the nodes of each value.
	domains map[string]map[string][]*node
}

func newTopology(nodes []*node) *topology {
	return &topology{nodes: nodes, groups: map[string]*group{}, anti: map[string]*antiTerm{}, domains: map[string]map[string][]*node{}}
}

// groupOf returns the group of the pods in all of sets, counting the pods bound so far
// when it is new.
func (t *topology) groupOf(sets ...podSet) *group {
	keys := make([]string, len(sets))
	for i, s := range sets {
		keys[i] = s.key()
	}
	key := strings.Join(keys, "&")
	if g, ok := t.groups[key]; ok {
		return g
	}
	g := &group{sets: sets, perNode: make([]int, len(t.nodes))}
	for _, b := range t.bindings {
		if g.has(b.pod) {
			g.perNode[b.node.index]++
		}
	}
	t.groups[key] = g
	t.order = append(t.order, g)
	return g
}

// bound counts a pod just bound to n, and records its required anti-affinity.
func (t *topology) bound(pod *corev1.Pod, n *node) {
	t.bindings = append(t.bindings, binding{pod, n})
	for _, g := range t.order {
		if g.has(pod) {
			g.perNode[n.index]++
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		set, err := termSet(pod, term)
		if err != nil {
			continue // reported when the pod itself is checked
		}
		key := set.key() + "@" + term.TopologyKey
		at, ok := t.anti[key]
		if !ok {
			at = &antiTerm{set: set, key: term.TopologyKey, occupied: map[string]int{}}
			t.anti[key] = at
			t.antiList = append(t.antiList, at)
		}
		if value, ok := n.node.Labels[term.TopologyKey]; ok {
			at.occupied[value]++
		}
	}
}

// inDomain is how many pods of g are on the nodes sharing n's value of key; false when
// n has no such label.
func (t *topology) inDomain(g *group, key string, n *node) (int, bool) {
	value, ok := n.node.Labels[key]
	if !ok {
		return 0, false
	}
	count := 0
	for _, m := range t.domain(key, value) {
		count += g.perNode[m.index]
	}
	return count, true
}

// domain returns the nodes whose label key has value.
func (t *topology) domain(key, value string) []*node {
	byValue, ok := t.domains[key]
	if !ok {
		byValue = map[string][]*node{}
		for _, n := range t.nodes {
			if v, ok := n.node.Labels[key]; ok {
				byValue[v] = append(byValue[v], n)
			}
		}
		t.domains[key] = byValue
	}
	return byValue[value]
}
