// Package schedulinginput turns the cluster's state into the input of the scheduling
// simulation: the Nodes pods could use now, the claims coming and standing by, and the
// pools' templates with the instance types their node classes offer. Provisioning asks
// it where waiting pods would go; disruption asks it where a node's pods would go if the
// node went away.
package schedulinginput

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
	nodeutil "k8s.io/component-helpers/node/util"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/standby"
	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/internal/windows"
)

// inFlightPhases are those of a claim asked to run that is not running yet.
var inFlightPhases = map[v1beta1.NodeClaimPhase]bool{
	"": true, v1beta1.PhaseLaunching: true, v1beta1.PhaseRegistering: true, v1beta1.PhaseInitializing: true,
	v1beta1.PhaseWarmingUp: true, v1beta1.PhaseStopping: true, v1beta1.PhaseStandby: true, v1beta1.PhaseStarting: true,
}

// catalog holds what the pools' node classes offer, to size claims not launched yet.
type catalog map[string]*cloudprovider.InstanceType

// unavailable reports whether the offering a launched claim's instance was bought as is
// marked unavailable: out of capacity in its zone, so that a start would fail.
func (types catalog) unavailable(claim *v1beta1.NodeClaim) bool {
	it := types[claim.Status.InstanceType]
	if it == nil {
		return false
	}
	key := cloudprovider.ClaimOffering(claim)
	for _, o := range it.Offerings {
		if it.Key(o) == key {
			return !o.Available
		}
	}
	return false
}

// StaleRank is added to the rank of a standby claim that is drifted or expired: it runs
// only when no fresh one can, as the pool controller replaces it anyway.
const StaleRank = 10

// Builder reads the pools and what their node classes offer.
type Builder struct {
	Client client.Client
	Cloud  cloudprovider.CloudProvider
	// Clock tells which claims have expired.
	Clock clock.PassiveClock
	// Calendar is the clock windows are read on; nil is Clock.
	Calendar clock.PassiveClock
}

// Input turns a snapshot and the pools into the simulation's input, to place pods.
func (b Builder) Input(ctx context.Context, snap state.Snapshot, pods []*corev1.Pod) (scheduling.Input, error) {
	in := scheduling.Input{Pods: pods}
	pools := &v1beta1.NodePoolList{}
	if err := b.Client.List(ctx, pools); err != nil {
		return in, err
	}
	types := catalog{}
	current := map[string]*v1beta1.NodePool{}
	currents := map[string]claimtemplate.Current{}
	poolClaims := map[string][]*v1beta1.NodeClaim{}
	for _, claim := range snap.All {
		poolClaims[claim.Spec.NodePool] = append(poolClaims[claim.Spec.NodePool], claim)
	}
	for i := range pools.Items {
		pool := &pools.Items[i]
		if !pool.DeletionTimestamp.IsZero() || pool.Spec.Paused || pool.Spec.KillSwitch {
			continue // nothing of the pool is launched or started
		}
		sp, made, err := b.schedulingPool(ctx, pool, poolClaims[pool.Name], types)
		if err != nil {
			log.FromContext(ctx).Error(err, "Leaving a pool out of this decision", "nodepool", pool.Name)
			continue
		}
		in.Pools = append(in.Pools, sp)
		current[pool.Name], currents[pool.Name] = pool, made
	}
	attachLimits, err := b.attachLimits(ctx)
	if err != nil {
		return in, err
	}
	if in.Volumes, err = b.volumeNeeds(ctx, snap, pods); err != nil {
		return in, err
	}
	for _, ns := range snap.Nodes {
		if Schedulable(ns.Node) {
			in.Nodes = append(in.Nodes, scheduling.Node{Node: withoutLaggingTaints(ns.Node), Pods: ns.Pods, AttachLimits: attachLimits[ns.Node.Name]})
		}
	}
	now := b.Clock.Now()
	for _, cs := range snap.Claims {
		c, ok := schedulingClaim(cs, types)
		if !ok {
			continue
		}
		pool := current[cs.Claim.Spec.NodePool]
		if c.Standby && (pool == nil || StartRefusedRecently(cs.Claim, now) || types.unavailable(cs.Claim)) {
			continue // its pool is paused, stopped by its kill switch, or gone; or the cloud just refused to start it, or has no capacity for it now
		}
		if c.Standby && claimtemplate.Stale(pool, cs.Claim, currents[pool.Name], now) != "" {
			c.Rank += StaleRank
		}
		c.AttachLimits = claimAttachLimits(cs, attachLimits, types)
		in.Claims = append(in.Claims, c)
	}
	balanceStandby(in.Claims)
	for _, ds := range snap.DaemonSets {
		in.DaemonSets = append(in.DaemonSets, daemonSetPod(ds))
	}
	return in, in.Validate()
}

// schedulingPool is a pool with the instance types its class offers within its
// requirements, and what its limits leave given all of its claims; and what its nodes
// should be made of now. A pool whose node class is not ready offers no new nodes:
// its standby claims may still start.
func (b Builder) schedulingPool(ctx context.Context, pool *v1beta1.NodePool, claims []*v1beta1.NodeClaim, types catalog) (scheduling.Pool, claimtemplate.Current, error) {
	class, err := nodeclass.Get(ctx, b.Client, pool.Spec.Template.Spec.NodeClassRef)
	if err != nil {
		return scheduling.Pool{}, claimtemplate.Current{}, fmt.Errorf("resolving the node class: %w", err)
	}
	made, err := claimtemplate.CurrentOf(pool, class)
	if err != nil {
		return scheduling.Pool{}, made, err
	}
	if ready, _, _ := nodeclass.Ready(class); !ready {
		return scheduling.Pool{Pool: pool}, made, nil
	}
	offered, err := b.Cloud.InstanceTypes(ctx, class)
	if err != nil {
		return scheduling.Pool{}, made, fmt.Errorf("listing instance types: %w", err)
	}
	requirements := v1beta1.CoreRequirements(pool.Spec.Template.Spec.Requirements)
	sp := scheduling.Pool{Pool: pool}
	zones := map[string]bool{}
	for _, it := range offered {
		types[it.Name] = it
		narrowed := *it
		narrowed.Offerings = nil
		for _, o := range it.Offerings {
			if o.Zone == "" {
				return sp, made, fmt.Errorf("the cloud offers instance type %s without a zone", it.Name)
			}
			if ok, err := cloudprovider.Satisfies(it, o, requirements); err == nil && ok {
				narrowed.Offerings = append(narrowed.Offerings, o)
				zones[o.Zone] = true
			}
		}
		if len(narrowed.Offerings) > 0 {
			sp.InstanceTypes = append(sp.InstanceTypes, &narrowed)
		}
	}
	if len(zones) > scheduling.MaxZones {
		return sp, made, fmt.Errorf("the pool's instance types are offered in %d zones; the scheduling simulation handles at most %d: narrow the pool's zones with a requirement", len(zones), scheduling.MaxZones)
	}
	// The active window may cap the nodes; windows that cannot be read leave the spec's.
	targets, _ := windows.For(pool, windows.Calendar(b.Calendar, b.Clock).Now())
	left := limits.Remaining(pool.Spec.Limits, targets.MaxNodes, claims, limits.Cheapest(offered))
	sp.NodesLeft, sp.Left = left.Nodes, left.Resources
	return sp, made, nil
}

// StartRetryBackoff is how long a standby claim whose start the cloud refused (for lack
// of capacity or quota) is not offered to pods again: the capacity seldom comes back
// within seconds, and pods are better served by other standby nodes or a launch.
const StartRetryBackoff = 3 * time.Minute

// StartRefusedRecently reports whether the cloud refused to start the claim within
// StartRetryBackoff of now.
func StartRefusedRecently(claim *v1beta1.NodeClaim, now time.Time) bool {
	started := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionStarted)
	return started != nil && started.Status == metav1.ConditionFalse && now.Sub(started.LastTransitionTime.Time) < StartRetryBackoff
}

// schedulingClaim is a claim provisioning may place pods on: one asked to run that does
// not run yet (in flight), or one asked to stand by that could run instead (standby).
func schedulingClaim(cs state.ClaimState, types catalog) (scheduling.Claim, bool) {
	claim := cs.Claim
	running := claim.Spec.DesiredState == v1beta1.DesiredRunning
	rank, standbyCandidate := standby.Rank(claim.Status.Phase)
	if (running && !inFlightPhases[claim.Status.Phase]) || (!running && !standbyCandidate) {
		return scheduling.Claim{}, false
	}
	c := scheduling.Claim{Claim: claim, Standby: !running, Rank: rank, Pods: append(append([]*corev1.Pod(nil), cs.Pods...), cs.Nominated...)}
	c.Labels = map[string]string{}
	if cs.Node != nil {
		for k, v := range cs.Node.Labels {
			c.Labels[k] = v
		}
	} else {
		for k, v := range claim.Labels {
			c.Labels[k] = v
		}
		c.Labels[corev1.LabelHostname] = claim.Name
		setIf(c.Labels, corev1.LabelInstanceTypeStable, claim.Status.InstanceType)
		setIf(c.Labels, corev1.LabelTopologyZone, claim.Status.Zone)
		setIf(c.Labels, v1beta1.LabelCapacityType, claim.Status.CapacityType)
	}
	for _, t := range claim.Spec.Taints {
		c.Taints = append(c.Taints, t.Core())
	}
	it := types[claim.Status.InstanceType]
	switch {
	case claim.Status.Allocatable != nil:
		c.Allocatable = claim.Status.Allocatable
	case it != nil:
		// Launched, not registered: its type as its kubelet configuration makes it.
		c.Allocatable = it.WithKubelet(claim.Spec.Kubelet).Allocatable()
	default:
		// Not launched yet: it holds what it was made for, no more.
		c.Allocatable = claim.Spec.Resources.Requests
	}
	if it != nil {
		if o, ok := it.Cheapest(func(o cloudprovider.Offering) bool {
			return o.Zone == claim.Status.Zone && o.CapacityType == claim.Status.CapacityType
		}); ok {
			c.PricePerHour = o.PricePerHour
		}
		setIf(c.Labels, corev1.LabelArchStable, it.Architecture)
		// The instance labels of its type, which its Node carries or will: pods that
		// select on them may go to the claim before the Node shows them.
		for k, v := range it.Attributes {
			if _, ok := c.Labels[k]; !ok {
				c.Labels[k] = v
			}
		}
	}
	return c, true
}

func setIf(labels map[string]string, key, value string) {
	if value != "" && labels[key] == "" {
		labels[key] = value
	}
}

// Schedulable reports whether kube-scheduler may place pods on a Node now.
func Schedulable(node *corev1.Node) bool {
	if node.Spec.Unschedulable || !node.DeletionTimestamp.IsZero() {
		return false
	}
	_, ready := nodeutil.GetNodeCondition(&node.Status, corev1.NodeReady)
	return ready != nil && ready.Status == corev1.ConditionTrue
}

// laggingTaints follow a Node's Ready condition: kube-controller-manager (not-ready,
// unreachable) and the cloud controller manager (shutdown) lift them shortly after the
// Node turns Ready, and kube-scheduler places pods once it has. The
// reservation of a Node that just started running goes within seconds too, and the
// pods it is for count on the Node already.
var laggingTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, cloudproviderapi.TaintNodeShutdown, v1beta1.TaintReservedKey}

// withoutLaggingTaints returns a Ready node without the taints that lag its readiness,
// so that a node that just turned Ready counts as the capacity it is about to be.
func withoutLaggingTaints(node *corev1.Node) *corev1.Node {
	if !slices.ContainsFunc(node.Spec.Taints, lagging) {
		return node
	}
	copied := node.DeepCopy()
	copied.Spec.Taints = slices.DeleteFunc(copied.Spec.Taints, lagging)
	return copied
}

func lagging(t corev1.Taint) bool { return slices.Contains(laggingTaints, t.Key) }

// daemonSetPod is the pod a DaemonSet would run on a new node.
func daemonSetPod(ds *appsv1.DaemonSet) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.Name, Namespace: ds.Namespace, Labels: ds.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}},
		},
		Spec: ds.Spec.Template.Spec,
	}
}
