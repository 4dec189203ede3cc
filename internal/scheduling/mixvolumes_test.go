package scheduling

import (
	"fmt"
	"math/rand/v2"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/stratos-sh/stratos/internal/volumes"
)

// mixVolumesStream is the PCG stream of the volumes added to a generated input.
const mixVolumesStream = 0x766f6c // "vol"

// mixVolumes gives some of a generated input's pods volumes, and returns the storage
// objects they name: a fifth of the pending pods and of the pods on nodes get a bound
// zonal volume (named by the zone label or the EBS driver's), an unbound claim or a
// generic ephemeral volume of a WaitForFirstConsumer class allowed in one or two zones,
// or, one in twenty of them, a claim that cannot bind yet; some nodes publish small
// attach limits, and the pools' types attach 3 to 26 volumes.
func mixVolumes(seed uint64, in *Input) *storageFixture {
	rng := rand.New(rand.NewPCG(seed, mixVolumesStream))
	f := newStorageFixture()
	var zones []string
	for _, p := range in.Pools {
		for _, t := range p.InstanceTypes {
			t.AttachLimits = map[string]int64{volumes.EBSDriver: 3 + rng.Int64N(24)}
			for _, o := range t.Offerings {
				if !slices.Contains(zones, o.Zone) {
					zones = append(zones, o.Zone)
				}
			}
		}
	}
	slices.Sort(zones)
	for _, z := range zones {
		f.class("wffc-"+z, storagev1.VolumeBindingWaitForFirstConsumer, z)
	}
	if len(zones) > 1 {
		f.class("wffc-two", storagev1.VolumeBindingWaitForFirstConsumer, zones[0], zones[1])
	}
	f.class("immediate", storagev1.VolumeBindingImmediate)
	classes := make([]string, 0, len(f.classes))
	for name := range f.classes {
		if name != "immediate" {
			classes = append(classes, name)
		}
	}
	slices.Sort(classes)
	n := 0
	give := func(pod *corev1.Pod, waiting bool) {
		n++
		name := fmt.Sprintf("vol-%d", n)
		switch k := rng.IntN(20); {
		case waiting && k == 0:
			f.unboundClaimIn(pod.Namespace, name, "immediate")
			mounting(name)(pod)
		case k < 8:
			key := corev1.LabelTopologyZone
			if k%2 == 0 {
				key = volumes.EBSZoneLabel
			}
			f.boundClaimIn(pod.Namespace, name, key, zones[rng.IntN(len(zones))])
			mounting(name)(pod)
		case k < 14:
			f.unboundClaimIn(pod.Namespace, name, classes[rng.IntN(len(classes))])
			mounting(name)(pod)
		default:
			ephemeralOf(classes[rng.IntN(len(classes))])(pod)
		}
	}
	for _, pod := range in.Pods {
		if rng.IntN(5) == 0 {
			give(pod, true)
		}
	}
	for i := range in.Nodes {
		node := &in.Nodes[i]
		for _, pod := range node.Pods {
			if rng.IntN(5) == 0 && !slices.ContainsFunc(node.Pods, func(p *corev1.Pod) bool { return p != pod && len(p.Spec.Volumes) > 0 && len(pod.Spec.Volumes) > 0 }) {
				// A pod on a node has a volume its node can have: one bound in its zone.
				n++
				name := fmt.Sprintf("vol-%d", n)
				f.boundClaimIn(pod.Namespace, name, corev1.LabelTopologyZone, node.Node.Labels[corev1.LabelTopologyZone])
				mounting(name)(pod)
			}
		}
		if rng.IntN(3) == 0 {
			attached := 0
			for _, pod := range node.Pods {
				attached += len(pod.Spec.Volumes)
			}
			f.csiNode(node.Node.Name, int32(attached+rng.IntN(3)))
		}
	}
	return f
}
