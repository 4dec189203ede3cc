package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// result turns the bins into decisions.
func (s *solver) result(unschedulable []*podInfo) Result {
	r := Result{Existing: map[*corev1.Pod]string{}, InFlight: map[*corev1.Pod]string{}, Order: s.order}
	for _, b := range s.bins {
		if len(b.placed) == 0 {
			continue
		}
		pods := make([]*corev1.Pod, len(b.placed))
		for i, p := range b.placed {
			pods[i] = p.pod
		}
		switch b.kind {
		case existingBin:
			for _, pod := range pods {
				r.Existing[pod] = b.name
			}
		case inFlightBin:
			for _, pod := range pods {
				r.InFlight[pod] = b.name
			}
		case standbyBin:
			r.Starts = append(r.Starts, Start{Claim: b.name, Pods: pods})
		case newBin:
			r.Launches = append(r.Launches, s.launch(b, pods))
		}
	}
	for _, p := range unschedulable {
		if p.volumes.wait != "" {
			r.Unschedulable = append(r.Unschedulable, Unschedulable{Pod: p.pod, Volumes: p.volumes.wait})
			continue
		}
		r.Unschedulable = append(r.Unschedulable, Unschedulable{Pod: p.pod, Reasons: s.explain(p)})
	}
	return r
}

// toList converts requests back to a Kubernetes resource list.
func toList(r resources) corev1.ResourceList {
	list := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(r.cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(r.memory, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(r.pods, resource.DecimalSI),
	}
	if r.storage > 0 {
		list[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.storage, resource.BinarySI)
	}
	for name, v := range r.extended {
		list[name] = *resource.NewQuantity(v, resource.DecimalSI)
	}
	return list
}
