package runner

import (
	"context"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/podutil"
	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// costly answers the counts of a condition that read more than the cache's pods, Nodes
// and claims, at the moment a condition asks.
type costly struct {
	ctx context.Context
	r   *run
}

// podsWithEvent counts the scenario's pods that have an Event with reason.
func (c costly) podsWithEvent(reason string) int {
	events := &eventsv1.EventList{}
	if err := c.r.client.List(c.ctx, events); err != nil {
		return 0
	}
	pods := map[string]bool{}
	for _, e := range events.Items {
		if e.Reason == reason && e.Regarding.Kind == "Pod" {
			pods[e.Regarding.Namespace+"/"+e.Regarding.Name] = true
		}
	}
	n := 0
	for key := range pods {
		if c.r.observer.seenPod(key) {
			n++
		}
	}
	return n
}

// evictions counts the evictions the operator asked for, from the API server's audit
// log: a pod it evicted and that its Deployment replaced leaves no other trace.
func (c costly) evictions() int {
	return auditedWrites(c.r.opts.WorkDir + "/audit.log")["create "+string(corev1.ResourcePods)+"/eviction"]
}

// podLatency is a percentile of the latencies of the pods created at or after since
// that run so far.
func (c costly) podLatency(q float64, since time.Time) int {
	var latencies []float64
	for _, t := range c.r.observer.podTimes() {
		if !t.running.IsZero() && !t.created.Before(since) {
			latencies = append(latencies, t.running.Sub(t.created).Seconds()*c.r.scale)
		}
	}
	if len(latencies) == 0 {
		return 0
	}
	p := report.Percentiles(latencies)
	value := p.Max
	if q < 100 {
		value = p.P99
	}
	return int(math.Ceil(value))
}

// daemonSetPodsOnStandby counts the DaemonSet pods bound to the Nodes of standby claims.
func (c costly) daemonSetPodsOnStandby() int {
	nodes := &corev1.NodeList{}
	if err := c.r.client.List(c.ctx, nodes, client.MatchingLabels{v1beta1.LabelState: string(v1beta1.PhaseStandby)}); err != nil {
		return 0
	}
	standby := map[string]bool{}
	for _, node := range nodes.Items {
		standby[node.Name] = true
	}
	pods := &corev1.PodList{}
	if err := c.r.client.List(c.ctx, pods); err != nil {
		return 0
	}
	n := 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if standby[pod.Spec.NodeName] && podutil.OwnedByDaemonSet(pod) && pod.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// podsServed counts the pods created at or after since that run and were served by
// path.
func (c costly) podsServed(path report.Path, since time.Time) int {
	starts := startsByInstance(c.r.cloud.startCalls())
	return servedSince(c.r.observer.podTimes(), since, c.r.observer.nodeRegistrations(), starts)[path]
}

// buffersShowing counts the CapacityBuffers whose condition is as want says.
func (c costly) buffersShowing(want *scenario.BufferConditionCount) int {
	buffers := &autoscalingv1beta1.CapacityBufferList{}
	if err := c.r.client.List(c.ctx, buffers); err != nil {
		return 0
	}
	return buffersShowing(buffers.Items, want)
}

// displaced answers the counts of displaced pods and their recovery as of now.
func (c costly) displaced(name string) int { return c.r.displacedCount(name) }
