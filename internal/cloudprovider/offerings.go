package cloudprovider

import (
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// Labels are the well-known labels a Node of this type bought as offering o carries:
// what a pool's requirements and pods' node selectors select on. They are the type's
// Attributes (the instance labels) and the type, zone, architecture, OS and capacity
// type, which no attribute overrides.
func (t *InstanceType) Labels(o Offering) map[string]string {
	labels := make(map[string]string, len(t.Attributes)+5)
	maps.Copy(labels, t.Attributes)
	labels[corev1.LabelInstanceTypeStable] = t.Name
	labels[corev1.LabelTopologyZone] = o.Zone
	labels[corev1.LabelArchStable] = t.Architecture
	labels[corev1.LabelOSStable] = "linux"
	labels[v1beta1.LabelCapacityType] = o.CapacityType
	return labels
}

// Satisfies reports whether a Node of type t bought as offering o meets every
// requirement, with the node-affinity semantics of k8s.io/component-helpers.
func Satisfies(t *InstanceType, o Offering, requirements []corev1.NodeSelectorRequirement) (bool, error) {
	if len(requirements) == 0 {
		return true, nil
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: t.Labels(o)}}
	selector := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: requirements}}}
	ok, err := corev1helpers.MatchNodeSelectorTerms(node, selector)
	if err != nil {
		return false, fmt.Errorf("invalid requirements: %w", err)
	}
	return ok, nil
}

// CheapestOffering returns the cheapest available offering, among types, that meets the
// requirements; ties go to the first type name, then zone, so that choices repeat.
func CheapestOffering(types []*InstanceType, requirements []corev1.NodeSelectorRequirement) (*InstanceType, Offering, bool, error) {
	sorted := append([]*InstanceType(nil), types...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	var (
		bestType *InstanceType
		best     Offering
	)
	for _, t := range sorted {
		for _, o := range t.Offerings {
			if !o.Available || (bestType != nil && o.PricePerHour >= best.PricePerHour) {
				continue
			}
			ok, err := Satisfies(t, o, requirements)
			if err != nil {
				return nil, Offering{}, false, err
			}
			if ok {
				bestType, best = t, o
			}
		}
	}
	return bestType, best, bestType != nil, nil
}

// ClaimOffering is the offering a launched claim's instance was bought as; zero before
// its launch.
func ClaimOffering(claim *v1beta1.NodeClaim) OfferingKey {
	return OfferingKey{InstanceType: claim.Status.InstanceType, Zone: claim.Status.Zone, CapacityType: claim.Status.CapacityType}
}

// Fits reports whether every non-zero request fits in allocatable; a resource the
// instance type lacks does not fit.
func Fits(allocatable, requests corev1.ResourceList) bool {
	for name, request := range requests {
		if request.IsZero() {
			continue
		}
		available, ok := allocatable[name]
		if !ok || request.Cmp(available) > 0 {
			return false
		}
	}
	return true
}
