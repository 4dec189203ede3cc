package verifier

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// attachLimits is the most volumes each CSI driver may attach to a node: the node's
// CSINode decides when it has one (a driver it gives no count is unlimited); else the
// limits the case gives the node.
func attachLimits(csiNode *storagev1.CSINode, given map[string]int64) map[string]int64 {
	if csiNode == nil {
		return given
	}
	out := map[string]int64{}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = int64(*d.Allocatable.Count)
		}
	}
	return out
}

// attachesWithin is NodeVolumeLimits (CSILimits): the volumes the pod would newly attach
// to n, per driver, added to those n's pods attach already, stay within the driver's
// limit. A volume n attaches already, as a claim two pods share, is not new.
func (cl *cluster) attachesWithin(pod *corev1.Pod, n *node) *failure {
	if len(n.limits) == 0 {
		return nil
	}
	added := map[string]int64{}
	seen := map[volumeID]bool{}
	for _, pc := range cl.storage.claimsOf(pod) {
		id := pc.attach
		if id.driver == "" || n.attached[id] || seen[id] {
			continue
		}
		seen[id] = true
		added[id.driver]++
	}
	drivers := make([]string, 0, len(added))
	for d := range added {
		drivers = append(drivers, d)
	}
	slices.Sort(drivers)
	for _, d := range drivers {
		if limit, ok := n.limits[d]; ok && n.perDriver[d]+added[d] > limit {
			return &failure{RuleVolumeLimits, fmt.Sprintf("%d volumes of %s attached and %d more, the limit is %d", n.perDriver[d], d, added[d], limit)}
		}
	}
	return nil
}

// attach records the volumes pod attaches to n.
func (cl *cluster) attach(pod *corev1.Pod, n *node) {
	for _, pc := range cl.storage.claimsOf(pod) {
		id := pc.attach
		if id.driver == "" || n.attached[id] {
			continue
		}
		if n.attached == nil {
			n.attached = map[volumeID]bool{}
			n.perDriver = map[string]int64{}
		}
		n.attached[id] = true
		n.perDriver[id.driver]++
	}
}
