package disruption

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch

// activeBufferPods are the virtual pods of the served, resolved CapacityBuffers of the
// active-capacity strategy: their room is on running nodes, which disruption keeps.
// Standby-capacity buffers hold standby nodes, not running ones.
func activeBufferPods(ctx context.Context, c client.Client) ([]*corev1.Pod, error) {
	list := &autoscalingv1beta1.CapacityBufferList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		b := &list.Items[i]
		if !b.DeletionTimestamp.IsZero() || !capacitybuffer.Served(b) || !capacitybuffer.Resolved(b) ||
			capacitybuffer.Strategy(b) != autoscalingv1beta1.StrategyActiveCapacity {
			continue
		}
		template := &corev1.PodTemplate{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Status.PodTemplateRef.Name}, template); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		pods = append(pods, capacitybuffer.VirtualPods(b, template)...)
	}
	return pods, nil
}

// bufferRoomKept reports whether the nodes of gone may go as far as the active buffers
// are concerned: on the running nodes of in without them, the pods moving off them and
// the buffers' virtual pods all fit, as many virtual pods as fit on all of them now.
// Nothing is started or launched in either simulation. Comparing with the room there is
// now, not with every virtual pod, keeps a buffer that fits nowhere from holding every
// node.
func bufferRoomKept(in scheduling.Input, virtual []*corev1.Pod, gone map[string]bool, moving []*corev1.Pod) bool {
	if len(virtual) == 0 {
		return true
	}
	onRunning := in
	onRunning.Claims, onRunning.Pools = nil, nil
	onRunning.Pods = virtual
	now := len(scheduling.Solve(onRunning).Existing)
	if now == 0 {
		return true // the buffers have no room on running nodes to keep
	}
	without := onRunning
	without.Nodes = nil
	for _, n := range in.Nodes {
		if !gone[n.Node.Name] {
			without.Nodes = append(without.Nodes, n)
		}
	}
	without.Pods = append(append([]*corev1.Pod(nil), moving...), virtual...)
	placed := scheduling.Solve(without).Existing
	for _, pod := range moving {
		if _, ok := placed[pod]; !ok {
			return false
		}
	}
	return len(placed)-len(moving) >= now
}

// keepsBufferRoom says whether the candidates may go as far as the buffers are
// concerned (bufferRoomKept), on the pass's simulation input.
func (c *Controller) keepsBufferRoom(ctx context.Context, p *pass, set []candidate) (bool, error) {
	if len(p.buffers) == 0 {
		return true, nil
	}
	in, err := c.simulationInput(ctx, p)
	if err != nil {
		return false, err
	}
	gone := map[string]bool{}
	var moving []*corev1.Pod
	for _, cand := range set {
		gone[cand.node.Name] = true
		moving = append(moving, cand.workloads()...)
	}
	return bufferRoomKept(in, p.buffers, gone, moving), nil
}
