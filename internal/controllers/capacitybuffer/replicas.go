package capacitybuffer

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
)

// count is how many chunks a buffer keeps room for, and why.
type count struct {
	// replicas is the number of chunks, after the limits.
	replicas int32
	// wanted is the number the spec asks for before the limits; -1 when the spec sets
	// neither replicas nor percentage and the limits alone say how many.
	wanted int32
	// limitedBy says which limits cut wanted to replicas ("cpu: 3 chunks of 500m fit in
	// 2"), empty when they did not.
	limitedBy string
	// unbounded: the spec sets neither replicas nor percentage and no limit bounds a
	// chunk's requests, so there is no number to keep.
	unbounded bool
}

// countChunks resolves the number of chunks as Cluster Autoscaler's buffer controller
// does: spec.replicas; percentage of the workload's replicas rounded up; the larger of
// both when both are set; with neither, as many as the limits allow. The limits then cap
// the chunks by their total requests. workloadReplicas is the scalableRef's current
// replicas (ignored without a percentage).
func countChunks(spec *autoscalingv1beta1.CapacityBufferSpec, workloadReplicas int32, template *corev1.PodTemplateSpec) count {
	wanted := int32(-1)
	if spec.Replicas != nil {
		wanted = *spec.Replicas
	}
	if spec.Percentage != nil {
		if p := percentOf(workloadReplicas, *spec.Percentage); p > wanted {
			wanted = p
		}
	}
	limit, why := chunksWithin(spec.Limits, template)
	switch {
	case wanted < 0 && limit < 0:
		return count{wanted: wanted, unbounded: true}
	case wanted < 0:
		return count{replicas: limit, wanted: wanted}
	case limit >= 0 && limit < wanted:
		return count{replicas: limit, wanted: wanted, limitedBy: why}
	default:
		return count{replicas: wanted, wanted: wanted}
	}
}

// percentOf is percentage of replicas, rounded up: a workload with any replicas and a
// percentage above zero gets room for at least one chunk.
func percentOf(replicas, percentage int32) int32 {
	if replicas <= 0 || percentage <= 0 {
		return 0
	}
	n := math.Ceil(float64(replicas) * float64(percentage) / 100)
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(n)
}

// chunksWithin is how many chunks of template fit in limits: for every limited resource
// the chunk requests, the limit divided by the request, rounded down; the smallest of
// them. It is -1 when no limit bounds the chunk (no limits, or none on a resource the
// chunk requests). why names the resource that bounds, with its figures.
func chunksWithin(limits *autoscalingv1beta1.ResourceList, template *corev1.PodTemplateSpec) (int32, string) {
	if limits == nil || len(*limits) == 0 {
		return -1, ""
	}
	requests := chunkRequests(template)
	names := make([]string, 0, len(*limits))
	for name := range *limits {
		names = append(names, string(name))
	}
	sort.Strings(names) // the same message from one pass to the next
	best, why := int64(-1), ""
	for _, name := range names {
		limit := (*limits)[autoscalingv1beta1.ResourceName(name)]
		request, ok := requests[corev1.ResourceName(name)]
		if !ok || request.Sign() <= 0 {
			continue
		}
		// Exact decimal division, so that 1.5 CPU in chunks of 500m is 3, not 2.9999.
		n := new(inf.Dec).QuoRound(limit.AsDec(), request.AsDec(), 0, inf.RoundDown)
		fits, ok := n.Unscaled()
		if !ok || fits > math.MaxInt32 {
			fits = math.MaxInt32
		}
		if fits < 0 {
			fits = 0
		}
		if best < 0 || fits < best {
			best = fits
			why = fmt.Sprintf("%s: %d chunks of %s fit in %s", name, fits, request.String(), limit.String())
		}
	}
	return int32(best), why
}

// chunkRequests are the requests of one pod of template, as the scheduler counts them
// (init containers, sidecars, pod-level resources and overhead included).
func chunkRequests(template *corev1.PodTemplateSpec) corev1.ResourceList {
	pod := &corev1.Pod{ObjectMeta: template.ObjectMeta, Spec: template.Spec}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// describeLimits renders limits for a message, in a stable order.
func describeLimits(limits *autoscalingv1beta1.ResourceList) string {
	if limits == nil {
		return "none"
	}
	parts := make([]string, 0, len(*limits))
	for name, q := range *limits {
		parts = append(parts, fmt.Sprintf("%s: %s", name, q.String()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
