package scheduling

// The topology of mixInput's pods: spread and pod (anti-)affinity over the shared labels.

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setTopology gives a pod the spread and pod (anti-)affinity of its kind. Selectors draw
// from the shared labels, so that they overlap other workloads' groups. It reports false
// when the kind cannot be made satisfiable (an affinity without a target).
func (g *mixGen) setTopology(pod *corev1.Pod, kind string) bool {
	own := pod.Labels
	required := func(key string, sel *metav1.LabelSelector) []corev1.PodAffinityTerm {
		return []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: sel}}
	}
	spread := func(key string, skew int32, doNotSchedule bool, sel *metav1.LabelSelector, ownGroup bool) corev1.TopologySpreadConstraint {
		c := corev1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: sel}
		if doNotSchedule {
			c.WhenUnsatisfiable = corev1.DoNotSchedule
		}
		if ownGroup && g.chance(30) {
			c.MatchLabelKeys = []string{"pod-template-hash"} // as a Deployment's rollout would
		}
		return c
	}
	a := &corev1.Affinity{}
	switch kind {
	case mixZoneSpread:
		sel, ownGroup := g.selector(own)
		c := spread(corev1.LabelTopologyZone, 1+int32(g.rng.IntN(2)), g.chance(80), sel, ownGroup)
		pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c}
		if g.chance(33) {
			pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints,
				spread(corev1.LabelHostname, 1+int32(g.rng.IntN(3)), g.chance(50), sel, ownGroup))
		}
	case mixHostSpread:
		sel, ownGroup := g.selector(own)
		pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
			spread(corev1.LabelHostname, 1+int32(g.rng.IntN(3)), g.chance(85), sel, ownGroup),
		}
	case mixNear:
		term, ok := g.anchorTerm(pod, corev1.LabelHostname)
		if !ok {
			return false
		}
		a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
	case mixColocated:
		// Its own workload, by the hash: the first replica goes anywhere, the rest join it.
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"pod-template-hash": own["pod-template-hash"]}}
		a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(corev1.LabelHostname, sel)}
	case mixHostAnti:
		// Half repel their own app, half a tier: either way every replica takes a node of
		// its own, free of a sixth or a third of all pods.
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": own["app"]}}
		if g.chance(50) {
			sel = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": g.pick(mixTiers)}}
		}
		a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(corev1.LabelHostname, sel)}
	case mixZoneAnti:
		// One replica per zone; a bigger group would repel matching pods from every zone.
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"pod-template-hash": own["pod-template-hash"]}}
		a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(corev1.LabelTopologyZone, sel)}
	case mixZoneAffinity:
		term := corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": own["app"]}}}
		if g.chance(50) {
			var ok bool
			if term, ok = g.anchorTerm(pod, corev1.LabelTopologyZone); !ok {
				return false
			}
		}
		a.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
	case mixPreferred:
		// Mostly away from its own replicas (matchLabelKeys), else from its whole app: the
		// simulation keeps a preference while a new node can, so the latter opens many.
		appTerm := corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": own["app"]}}}
		if g.chance(70) {
			appTerm.LabelSelector.MatchLabels["tier"] = own["tier"]
			appTerm.MatchLabelKeys = []string{"pod-template-hash"}
		}
		tierTerm := corev1.PodAffinityTerm{TopologyKey: corev1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": g.pick(mixTiers)}}}
		switch g.rng.IntN(3) {
		case 0:
			a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: appTerm}}}
		case 1:
			a.PodAffinity = &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 50, PodAffinityTerm: tierTerm}}}
		default:
			a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: appTerm}}}
			sel, ownGroup := g.selector(own)
			pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{spread(corev1.LabelTopologyZone, 1, false, sel, ownGroup)}
		}
	}
	if a.PodAffinity != nil || a.PodAntiAffinity != nil {
		if pod.Spec.Affinity != nil {
			a.NodeAffinity = pod.Spec.Affinity.NodeAffinity
		}
		pod.Spec.Affinity = a
	}
	return true
}

// selector draws a label selector from the shared values; half of them select the
// pod's own app (ownGroup), the rest whatever they draw, often not the pod itself.
func (g *mixGen) selector(own map[string]string) (sel *metav1.LabelSelector, ownGroup bool) {
	switch g.rng.IntN(10) {
	case 0, 1, 2:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": own["app"]}}, true
	case 3, 4:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": own["app"], "tier": own["tier"]}}, true
	case 5:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick(mixApps)}}, false
	case 6:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"tier": g.pick(mixTiers)}}, false
	case 7:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": g.pick(mixApps), "tier": g.pick(mixTiers)}}, false
	default:
		perm := g.rng.Perm(len(mixApps))
		values := []string{mixApps[min(perm[0], perm[1])], mixApps[max(perm[0], perm[1])]}
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: values}}}, false
	}
}

// anchorTerm is a required pod affinity term on the app or tier of a plain workload of
// more CPU than the pod, of the pod's namespace when there is one, else of any namespace
// (an empty namespace selector). The simulation places pods biggest first, in one pass:
// the group must have a member placed before the pod.
func (g *mixGen) anchorTerm(pod *corev1.Pod, key string) (corev1.PodAffinityTerm, bool) {
	var bigger, same []*corev1.Pod
	for _, a := range g.anchors {
		if podRequests(a).cpu > podRequests(pod).cpu {
			bigger = append(bigger, a)
			if a.Namespace == pod.Namespace {
				same = append(same, a)
			}
		}
	}
	if len(bigger) == 0 {
		return corev1.PodAffinityTerm{}, false
	}
	// A hostname follower comes last and needs a node with room that holds a member:
	// its group is a tier (a third of the pods), of every namespace outside default.
	ownNamespace, label := len(same) > 0 && g.chance(85), "tier"
	if key == corev1.LabelHostname {
		ownNamespace = len(same) > 0 && pod.Namespace == "default"
	} else if g.chance(40) {
		label = "app"
	}
	term := corev1.PodAffinityTerm{TopologyKey: key}
	anchor := bigger[g.rng.IntN(len(bigger))]
	if ownNamespace {
		anchor = same[g.rng.IntN(len(same))]
	} else {
		term.NamespaceSelector = &metav1.LabelSelector{}
	}
	term.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{label: anchor.Labels[label]}}
	return term, true
}
