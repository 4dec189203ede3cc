package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// resources is a resource vector held as integers, so that the simulation compares and
// adds requests without allocating: CPU in millicores, memory and ephemeral storage in
// bytes, a pod count, and extended resources (GPUs and the like) in their units.
type resources struct {
	cpu, memory, storage, pods int64
	extended                   map[corev1.ResourceName]int64
}

// fromList converts a Kubernetes resource list.
func fromList(list corev1.ResourceList) resources {
	var r resources
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			r.cpu = q.MilliValue()
		case corev1.ResourceMemory:
			r.memory = q.Value()
		case corev1.ResourceEphemeralStorage:
			r.storage = q.Value()
		case corev1.ResourcePods:
			r.pods = q.Value()
		default:
			if r.extended == nil {
				r.extended = map[corev1.ResourceName]int64{}
			}
			r.extended[name] = q.Value()
		}
	}
	return r
}

// get is r's amount of one resource; 0 for a resource r does not have.
func (r *resources) get(name corev1.ResourceName) int64 {
	switch name {
	case corev1.ResourceCPU:
		return r.cpu
	case corev1.ResourceMemory:
		return r.memory
	case corev1.ResourceEphemeralStorage:
		return r.storage
	case corev1.ResourcePods:
		return r.pods
	}
	return r.extended[name]
}

// podRequests is what a pod asks of a node: the effective requests of its containers
// and init containers plus its overhead, as kube-scheduler counts them, and one pod.
func podRequests(pod *corev1.Pod) resources {
	r := fromList(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	r.pods = 1
	return r
}

// fits reports whether r fits in free.
func (r *resources) fits(free *resources) bool {
	if r.cpu > free.cpu || r.memory > free.memory || r.storage > free.storage || r.pods > free.pods {
		return false
	}
	if len(r.extended) == 0 {
		return true // most pods ask for no extended resource: skip the map iteration
	}
	for name, v := range r.extended {
		if v > 0 && v > free.extended[name] {
			return false
		}
	}
	return true
}

// add adds o to r.
func (r *resources) add(o *resources) {
	r.cpu += o.cpu
	r.memory += o.memory
	r.storage += o.storage
	r.pods += o.pods
	for name, v := range o.extended {
		if r.extended == nil {
			r.extended = map[corev1.ResourceName]int64{}
		}
		r.extended[name] += v
	}
}

// sub takes o from r.
func (r *resources) sub(o *resources) {
	r.cpu -= o.cpu
	r.memory -= o.memory
	r.storage -= o.storage
	r.pods -= o.pods
	for name, v := range o.extended {
		if r.extended == nil {
			r.extended = map[corev1.ResourceName]int64{}
		}
		r.extended[name] -= v
	}
}

// plus returns r + o.
func (r resources) plus(o *resources) resources {
	sum := r
	if r.extended != nil {
		sum.extended = make(map[corev1.ResourceName]int64, len(r.extended))
		for k, v := range r.extended {
			sum.extended[k] = v
		}
	}
	sum.add(o)
	return sum
}

// max raises r to at least o in every dimension.
func (r *resources) max(o *resources) {
	r.cpu = max(r.cpu, o.cpu)
	r.memory = max(r.memory, o.memory)
	r.storage = max(r.storage, o.storage)
	r.pods = max(r.pods, o.pods)
	for name, v := range o.extended {
		if r.extended == nil {
			r.extended = map[corev1.ResourceName]int64{}
		}
		r.extended[name] = max(r.extended[name], v)
	}
}
