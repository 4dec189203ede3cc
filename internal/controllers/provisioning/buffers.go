package provisioning

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/schedulinginput"
	"github.com/stratos-sh/stratos/internal/state"
)

// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling.x-k8s.io,resources=capacitybuffers/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=podtemplates,verbs=get;list;watch

// buffer is a served, resolved CapacityBuffer with its virtual pods.
type buffer struct {
	obj  *autoscalingv1beta1.CapacityBuffer
	key  string // namespace/name
	pods []*corev1.Pod
	// templateVersion is the resourceVersion of the buffer's PodTemplate.
	templateVersion string
}

// keepBufferRoom places the virtual pods of the served, resolved CapacityBuffers, after
// the real pods of this pass were decided and their decision written (existing are the
// real pods placed on Nodes that exist, which kube-scheduler has not bound yet).
//
// Real pods go first and alone: their decision is made on an input without virtual
// pods, so a buffer never holds room a real pod needs. The buffers are then placed on a
// fresh snapshot, which shows what that decision wrote (claims started or launched,
// pods nominated to them), plus the real pods it placed on existing Nodes, which only
// kube-scheduler's binding would show. This costs a second simulation input, and is
// simpler and safer than rebuilding by hand the claims a decision would create.
//
// The pass is skipped when nothing it reads changed since the last (see fingerprint):
// no write and no simulation without a change.
func (p *Provisioner) keepBufferRoom(ctx context.Context, existing map[*corev1.Pod]string) error {
	active, standbys, err := p.buffers(ctx)
	if err != nil {
		return err
	}
	if len(active)+len(standbys) == 0 && !p.keepingRoom() && len(p.BufferRoom.Buffers()) == 0 {
		return nil // no buffer now, nor any left to forget
	}
	snap := p.State.Snapshot()
	sum := fingerprint(snap, append(slices.Clone(active), standbys...), existing)
	p.mu.Lock()
	unchanged := p.bufferPrint == sum && p.bufferPrintSet
	p.mu.Unlock()
	if unchanged {
		return nil
	}
	outcomes := map[string]*bufferOutcome{}
	builder := schedulinginput.Builder{Client: p.Client, Cloud: p.Cloud, Clock: p.Clock, Calendar: p.Calendar}
	if len(active) > 0 {
		if err := p.keepActive(ctx, builder, snap, active, existing, outcomes); err != nil {
			return err
		}
	}
	room := map[string]map[string]int32{}
	if len(standbys) > 0 {
		var pods []*corev1.Pod
		for _, b := range standbys {
			pods = append(pods, b.pods...)
		}
		in, err := builder.Input(ctx, snap, pods)
		if err != nil {
			return err
		}
		for _, b := range standbys {
			outcomes[b.key] = standbyNeed(in, b)
			room[b.key] = outcomes[b.key].standbyNodes
		}
	}
	for _, key := range p.BufferRoom.Buffers() {
		if _, ok := room[key]; !ok {
			p.BufferRoom.Set(key, nil) // deleted, unresolved or turned active
		}
	}
	for key, perPool := range room {
		p.BufferRoom.Set(key, perPool)
	}
	var errs []error
	for _, b := range append(slices.Clone(active), standbys...) {
		if err := p.reportBuffer(ctx, b, outcomes[b.key]); err != nil {
			errs = append(errs, err)
		}
	}
	p.recordBufferMetrics(outcomes)
	if len(errs) > 0 {
		return fmt.Errorf("writing buffers' status: %v", errs)
	}
	p.mu.Lock()
	// Our own writes (claims, buffer status) change the next pass's fingerprint once:
	// that pass finds the room kept and writes nothing, and the one after is skipped.
	p.bufferPrint, p.bufferPrintSet = sum, true
	p.mu.Unlock()
	return nil
}

// buffers lists the served, resolved buffers by strategy, with their virtual pods. A
// buffer whose PodTemplate is missing is left out: the buffer controller reports it.
func (p *Provisioner) buffers(ctx context.Context) (active, standbys []buffer, err error) {
	list := &autoscalingv1beta1.CapacityBufferList{}
	if err := p.Client.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil, nil // the CRD is not installed: no buffers
		}
		return nil, nil, err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if !obj.DeletionTimestamp.IsZero() || !capacitybuffer.Served(obj) || !capacitybuffer.Resolved(obj) {
			continue
		}
		template := &corev1.PodTemplate{}
		if err := p.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.Status.PodTemplateRef.Name}, template); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, nil, err
		}
		b := buffer{obj: obj, key: obj.Namespace + "/" + obj.Name, pods: capacitybuffer.VirtualPods(obj, template), templateVersion: template.ResourceVersion}
		if capacitybuffer.Strategy(obj) == autoscalingv1beta1.StrategyStandbyCapacity {
			standbys = append(standbys, b)
		} else {
			active = append(active, b)
		}
	}
	return active, standbys, nil
}

// fingerprint sums up what the buffers' placement reads: the cluster's version (pools,
// node classes, Nodes, claims), the pods on each Node and claim, the buffers and their
// templates, and the real pods placed on Nodes this pass. Pods binding do not change
// the cluster's version, and a real pod taking a buffer's room is such a change.
func fingerprint(snap state.Snapshot, buffers []buffer, existing map[*corev1.Pod]string) uint64 {
	var sum uint64
	add := func(parts ...string) {
		h := fnv.New64a()
		for _, s := range parts {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
		sum ^= h.Sum64() // order does not matter: the snapshot's lists come from maps
	}
	add("version", fmt.Sprint(snap.Version))
	for _, ns := range snap.Nodes {
		for _, pod := range ns.Pods {
			add("node", ns.Node.Name, string(pod.UID))
		}
	}
	for _, cs := range snap.Claims {
		for _, pod := range append(slices.Clone(cs.Pods), cs.Nominated...) {
			add("claim", cs.Claim.Name, string(pod.UID))
		}
	}
	for _, b := range buffers {
		add("buffer", string(b.obj.UID), b.obj.ResourceVersion, b.templateVersion)
	}
	for pod, node := range existing {
		add("existing", node, string(pod.UID))
	}
	return sum
}

// keepActive places the active-capacity buffers' virtual pods on the whole cluster:
// room on Nodes and claims coming needs nothing, standby claims are started (no pod is
// nominated to them) and new claims launched, marked with the buffers they are for.
func (p *Provisioner) keepActive(ctx context.Context, builder schedulinginput.Builder, snap state.Snapshot, active []buffer, existing map[*corev1.Pod]string, outcomes map[string]*bufferOutcome) error {
	byPod := map[*corev1.Pod]*buffer{}
	var pods []*corev1.Pod
	for i := range active {
		outcomes[active[i].key] = &bufferOutcome{wanted: len(active[i].pods)}
		for _, pod := range active[i].pods {
			byPod[pod] = &active[i]
			pods = append(pods, pod)
		}
	}
	in, err := builder.Input(ctx, snap, pods)
	if err != nil {
		return err
	}
	withRealPlacements(&in, existing)
	roomForDaemonSets(&in)
	r := scheduling.Solve(in)
	nodePool := map[string]string{}
	for _, n := range in.Nodes {
		nodePool[n.Node.Name] = n.Node.Labels[v1beta1.LabelNodePool]
	}
	claims := map[string]*v1beta1.NodeClaim{}
	for _, c := range in.Claims {
		claims[c.Claim.Name] = c.Claim
		nodePool[c.Claim.Name] = c.Claim.Spec.NodePool
	}
	pools := map[string]*v1beta1.NodePool{}
	for _, sp := range in.Pools {
		pools[sp.Pool.Name] = sp.Pool
	}
	for pod, node := range r.Existing {
		outcomes[byPod[pod].key].placed(nodePool[node], placedRunning)
	}
	for pod, claim := range r.InFlight {
		outcomes[byPod[pod].key].placed(nodePool[claim], placedRunning)
	}
	var errs []error
	for _, s := range r.Starts {
		keys := buffersOf(s.Pods, byPod)
		for _, pod := range s.Pods {
			outcomes[byPod[pod].key].placed(nodePool[s.Claim], placedRunning)
		}
		if err := p.startForBuffers(ctx, claims[s.Claim], keys); err != nil {
			errs = append(errs, err)
		}
	}
	for _, l := range r.Launches {
		keys := buffersOf(l.Pods, byPod)
		for _, pod := range l.Pods {
			outcomes[byPod[pod].key].placed(l.Pool, placedRunning)
		}
		if err := p.launchForBuffers(ctx, pools[l.Pool], l, keys); err != nil {
			errs = append(errs, err)
		}
	}
	for _, u := range r.Unschedulable {
		outcomes[byPod[u.Pod].key].unplaced(u)
	}
	if len(errs) > 0 {
		return fmt.Errorf("keeping buffers' room: %v", errs)
	}
	return nil
}

// withRealPlacements puts the real pods this pass placed on existing Nodes on them: they
// take that room, though kube-scheduler has not bound them yet.
func withRealPlacements(in *scheduling.Input, existing map[*corev1.Pod]string) {
	for pod, node := range existing {
		for i := range in.Nodes {
			if in.Nodes[i].Node.Name == node {
				in.Nodes[i].Pods = append(slices.Clip(in.Nodes[i].Pods), pod)
			}
		}
	}
}

// roomForDaemonSets adds the DaemonSets' requests to the capacity of claims made for a
// buffer that the cloud has not launched yet. Such a claim holds what it was made for
// (its requests, DaemonSet overhead left out, see simulation's schedulingClaim), and the
// simulation takes the overhead off: without this, the buffer's pods would not fit
// their own claim on the next pass, and another would be launched for them.
func roomForDaemonSets(in *scheduling.Input) {
	if len(in.DaemonSets) == 0 {
		return
	}
	overhead := corev1.ResourceList{}
	for _, ds := range in.DaemonSets {
		for name, q := range resourcehelper.PodRequests(ds, resourcehelper.PodResourcesOptions{}) {
			sum := overhead[name]
			sum.Add(q)
			overhead[name] = sum
		}
	}
	for i := range in.Claims {
		c := &in.Claims[i]
		if c.Standby || c.Claim.Status.InstanceType != "" || c.Claim.Annotations[capacitybuffer.AnnotationBuffer] == "" {
			continue
		}
		grown := c.Allocatable.DeepCopy()
		for name, q := range overhead {
			sum := grown[name]
			sum.Add(q)
			grown[name] = sum
		}
		c.Allocatable = grown
	}
}

// buffersOf lists the buffers of pods, as the claim annotation names them.
func buffersOf(pods []*corev1.Pod, byPod map[*corev1.Pod]*buffer) string {
	var keys []string
	for _, pod := range pods {
		if !slices.Contains(keys, byPod[pod].key) {
			keys = append(keys, byPod[pod].key)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// startForBuffers asks a standby claim to run for buffers. No pod is nominated: the
// virtual pods do not exist, and a real pod may take the room at any time.
func (p *Provisioner) startForBuffers(ctx context.Context, claim *v1beta1.NodeClaim, buffers string) error {
	updated := claim.DeepCopy()
	updated.Spec.DesiredState = v1beta1.DesiredRunning
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[capacitybuffer.AnnotationBuffer] = buffers
	if err := p.Client.Patch(ctx, updated, client.MergeFrom(claim)); err != nil {
		return fmt.Errorf("asking claim %s to run for buffers %s: %w", claim.Name, buffers, err)
	}
	p.State.ObserveWrite(updated, claim.ResourceVersion)
	log.FromContext(ctx).Info("Started a standby claim for capacity buffers", "nodeclaim", claim.Name, "nodepool", claim.Spec.NodePool, "buffers", buffers)
	return nil
}

// launchForBuffers creates a claim for buffers' virtual pods, nominating none.
func (p *Provisioner) launchForBuffers(ctx context.Context, pool *v1beta1.NodePool, l scheduling.Launch, buffers string) error {
	claim := schedulinginput.LaunchClaim(pool, l)
	if claim.Annotations == nil {
		claim.Annotations = map[string]string{}
	}
	claim.Annotations[capacitybuffer.AnnotationBuffer] = buffers
	if err := controllerutil.SetControllerReference(pool, claim, p.Client.Scheme()); err != nil {
		return err
	}
	if err := p.Client.Create(ctx, claim); err != nil {
		return fmt.Errorf("creating a claim of pool %s for buffers %s: %w", pool.Name, buffers, err)
	}
	p.State.ObserveWrite(claim, "")
	log.FromContext(ctx).Info("Launched a claim for capacity buffers", "nodeclaim", claim.Name, "nodepool", pool.Name, "buffers", buffers, "instanceTypes", l.InstanceTypes)
	return nil
}

// standbyNeed is how many standby nodes of each pool a standby-capacity buffer needs:
// its virtual pods placed on new nodes of the pools' templates only (in is built for
// them). Nodes that run and claims coming do not count, nor do the standby claims there
// are (they are the warm pool's own target; the buffer's room comes on top). Each
// buffer is placed alone, so that each is told its own need. Pool limits are left to
// the nodepool controller, which bounds the raised target by them: counted here, the
// standby nodes made for the buffer would use up the limits they are counted against.
func standbyNeed(in scheduling.Input, b buffer) *bufferOutcome {
	o := &bufferOutcome{wanted: len(b.pods), standby: true, standbyNodes: map[string]int32{}}
	in.Pods, in.Nodes, in.Claims = b.pods, nil, nil
	in.Pools = slices.Clone(in.Pools)
	for i := range in.Pools {
		in.Pools[i].NodesLeft, in.Pools[i].Left = -1, nil
	}
	r := scheduling.Solve(in)
	for _, l := range r.Launches {
		o.standbyNodes[l.Pool]++
		for range l.Pods {
			o.placed(l.Pool, placedStandby)
		}
	}
	for _, u := range r.Unschedulable {
		o.unplaced(u)
	}
	return o
}
