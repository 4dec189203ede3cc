// Package nodepool keeps each pool's warm pool at its target within limits, reports the
// pool's counts and conditions, and removes every claim when the pool is deleted. It
// never calls the cloud for an instance: it creates and deletes NodeClaims.
package nodepool

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// conflictRetry is how soon a pass runs again after its status write lost a race, or
// when the cache does not show its own last writes yet.
const conflictRetry = 100 * time.Millisecond

// Finalizer keeps a deleted pool until its claims, and so its instances, are gone.
const Finalizer = v1beta1.Group + "/nodepool"

// Reconciler is the nodepool controller.
type Reconciler struct {
	Client   client.Client
	Cloud    cloudprovider.CloudProvider
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Calendar is the clock windows are read on; nil is Clock.
	Calendar clock.PassiveClock
	// CalendarChanged, when set, signals that Calendar jumped: every pool is looked at.
	CalendarChanged <-chan struct{}
	// Served, when set, takes the nodes learned pools pre-started that serve pods.
	Served ServedRecorder
	// Options bound the claims a pool creates and its backoff after failed warm-ups;
	// zero values are the defaults.
	Options Options
	// BufferRoom holds the standby nodes standby-capacity buffers need, added to the
	// pools' targets; nil adds none.
	BufferRoom *capacitybuffer.StandbyRoom

	expectations expectations
	series       poolSeries
	creations    creationLimits
	gone         goneFailures
	pacing       pacingNotes
	preStarts    preStarts
	learnedNotes learnedNotes
	statusWrites statusWrites
}

// Reconcile brings one pool's standby claims to target and writes its status: the
// steps of a pass, in order (see steps).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &pass{pool: &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}}
	for _, step := range r.steps() {
		if err := step.run(ctx, p); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: %w", step.name, err)
		}
		if p.done {
			break
		}
	}
	return p.result, nil
}

// writeStatus writes the pool's status when it differs from the one written, at most
// once per StatusWriteInterval: a status computed sooner is held pending, and the pass
// is requeued for when the write may go (see statusWrites).
func (r *Reconciler) writeStatus(ctx context.Context, pool *v1beta1.NodePool, written *v1beta1.NodePoolStatus, result ctrl.Result) (ctrl.Result, error) {
	if equality.Semantic.DeepEqual(*written, pool.Status) {
		r.statusWrites.settled(pool.Name)
		return result, nil
	}
	if wait := r.statusWrites.due(pool.Name, r.Options.WithDefaults().StatusWriteInterval); wait > 0 {
		r.statusWrites.hold(pool.Name, &pool.Status)
		if result.RequeueAfter == 0 || wait < result.RequeueAfter {
			result.RequeueAfter = wait
		}
		return result, nil
	}
	// The whole status is written, counts of zero included; a conflict retries the pass.
	status := pool.Status.DeepCopy()
	err := r.Client.Status().Update(ctx, pool)
	if err == nil {
		// As the API server stored it: times to the second.
		r.statusWrites.wrote(pool.Name, &pool.Status)
	} else {
		r.statusWrites.wrote(pool.Name, nil)
	}
	if err != nil {
		// The next pass starts from what this one computed, not from the cache.
		r.statusWrites.hold(pool.Name, status)
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: max(conflictRetry, r.statusWrites.due(pool.Name, r.Options.WithDefaults().StatusWriteInterval))}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return result, nil
}

// scale carries out one plan for the pool: the running minimum, the warm pool's
// creations and its removals, all within the limits as the limits package counts them.
func (r *Reconciler) scale(ctx context.Context, pool *v1beta1.NodePool, class client.Object, current claimtemplate.Current, obs *observation) error {
	// The instance types are read only when the pass needs them: for limits on a resource
	// (cpu, memory, nvidia.com/gpu, ...), for standby claims that may be held, or to
	// place new ones.
	var types []*cloudprovider.InstanceType
	if needsTypes(pool, obs) {
		var err error
		if types, err = r.Cloud.InstanceTypes(ctx, class); err != nil {
			return fmt.Errorf("listing instance types: %w", err)
		}
	}
	if types != nil {
		var err error
		if obs.noTypeFits, err = noInstanceTypeFits(pool, types); err != nil {
			return err
		}
	}
	estimate, perNode, err := sizing(pool, types)
	if err != nil {
		return err
	}
	unavailable := unavailableOfferings(types)
	now := r.Clock.Now()
	members := make([]member, 0, len(obs.claims))
	claims := make([]*v1beta1.NodeClaim, 0, len(obs.claims))
	staleBecause := map[string]v1beta1.DisruptionReason{}
	for i := range obs.claims {
		c := &obs.claims[i]
		claims = append(claims, c)
		staleBecause[c.Name] = claimtemplate.Stale(pool, c, current, now)
		held := c.Spec.DesiredState == v1beta1.DesiredStandby && unavailable[cloudprovider.ClaimOffering(c)]
		// A claim asked to be terminated goes as a deleted one does, once drained.
		deleting := !c.DeletionTimestamp.IsZero() || c.Spec.DesiredState == v1beta1.DesiredTerminated
		members = append(members, member{
			name:     c.Name,
			standby:  c.Spec.DesiredState == v1beta1.DesiredStandby,
			ready:    c.Status.Phase == v1beta1.PhaseStandby,
			deleting: deleting,
			stale:    staleBecause[c.Name],
			phase:    c.Status.Phase,
			created:  c.CreationTimestamp.Time,
			zone:     claimZone(c),
			held:     held,
		})
		if held {
			obs.held++
		}
	}
	left := limits.Remaining(pool.Spec.Limits, obs.targets.MaxNodes, claims, estimate)
	used := limits.Used(claims, estimate)
	obs.types, obs.usage = types, &used
	opts := r.Options.WithDefaults()
	allowed := r.creations.allowed(pool.Name, opts, now)
	g := goal{target: obs.target, ceiling: obs.targets.MaxStandby, minRunning: obs.targets.MinRunning, maxNodes: obs.targets.MaxNodes,
		newAtMost: &allowed, standbyAtMost: standbyCap(obs.failures, members, now),
		replaceAtMost: replacementBudgets(pool, obs.target, now)}
	p := planPool(g, members, left, perNode)
	obs.limited, obs.throttled, obs.paced = p.limited, p.throttled, p.paced > 0
	holding := ""
	if p.paced > 0 {
		holding = fmt.Sprintf("%s/%d", p.pacedBy, g.replaceAtMost[p.pacedBy])
	}
	if r.pacing.changed(pool.Name, holding) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, ReasonStandbyReplacementPaced, "Replace", "%s", pacedMessage(p, g.replaceAtMost[p.pacedBy]))
	}
	defer func() { r.creations.spend(pool.Name, opts, now, obs.created) }()
	if err := r.runMinimum(ctx, pool, p, obs); err != nil {
		return err
	}
	created, err := r.createStandby(ctx, pool, types, p.create, members, obs)
	if err != nil {
		return err
	}
	if created > 0 {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "ScaledUp", "Scale", "Created %d standby claims to reach %d", created, obs.target)
	}
	return r.removeStandby(ctx, pool, p.remove, claims, staleBecause, obs)
}

// createStandby creates n standby claims, each in the zone that has the fewest of the
// pool's fresh standby claims, and returns how many it created: none, with the reason in
// obs, when no zone has an offering that can stand by.
func (r *Reconciler) createStandby(ctx context.Context, pool *v1beta1.NodePool, types []*cloudprovider.InstanceType, n int, members []member, obs *observation) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	if obs.noTypeFits != "" {
		return 0, nil // no type the kubelet configuration leaves room on: writeStatus says so
	}
	zones, err := zonesForStandby(pool, types)
	if err != nil {
		return 0, err
	}
	if len(zones) == 0 {
		obs.noStandby = noStandbyMessage(pool)
		return 0, nil
	}
	counts := map[string]int{}
	for _, m := range members {
		if m.standby && m.stale == "" && !m.deleting && !m.held {
			counts[m.zone]++
		}
	}
	for i, zone := range spreadNew(n, counts, zones) {
		if err := r.createClaim(ctx, pool, claimtemplate.NewStandbyClaim(pool, zone, cloudprovider.StandbyCapacityTypes), obs); err != nil {
			return i, err
		}
	}
	return n, nil
}

// createClaim creates claim for the pool, and expects to see it.
func (r *Reconciler) createClaim(ctx context.Context, pool *v1beta1.NodePool, claim *v1beta1.NodeClaim, obs *observation) error {
	desired := claim.Spec.DesiredState
	if err := controllerutil.SetControllerReference(pool, claim, r.Client.Scheme()); err != nil {
		return err
	}
	if err := r.Client.Create(ctx, claim); err != nil {
		return fmt.Errorf("creating a claim asked to be %s: %w", desired, err)
	}
	r.expectations.expect(pool.Name, claim.Name, false, r.Clock.Now())
	obs.created++
	return nil
}

// removeAll deletes every claim of the pool that is not going already: the kill switch.
// The lifecycle controller drains each node within the pool's terminationGracePeriod.
func (r *Reconciler) removeAll(ctx context.Context, claims []v1beta1.NodeClaim) error {
	for i := range claims {
		if !claims[i].DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, &claims[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing claim %s for the kill switch: %w", claims[i].Name, err)
		}
		metrics.NodeClaimsTerminated.WithLabelValues(claims[i].Spec.NodePool, ReasonKillSwitch).Inc()
	}
	return nil
}

// hasStandby reports whether a claim stands by (phase Standby).
func hasStandby(claims []v1beta1.NodeClaim) bool {
	for i := range claims {
		if claims[i].Status.Phase == v1beta1.PhaseStandby {
			return true
		}
	}
	return false
}

// pointers lists pointers to the claims.
func pointers(claims []v1beta1.NodeClaim) []*v1beta1.NodeClaim {
	out := make([]*v1beta1.NodeClaim, len(claims))
	for i := range claims {
		out[i] = &claims[i]
	}
	return out
}

// needsTypes reports whether a pass over the pool needs the instance types: the pool has
// limits on a resource of its nodes' capacity, keeps a warm pool, has standby claims, or configures its
// kubelet, which may leave no type room for pods (the pool says so).
func needsTypes(pool *v1beta1.NodePool, obs *observation) bool {
	if limitsResources(pool) || obs.target > 0 || pool.Spec.Template.Spec.Kubelet != nil {
		return true
	}
	for i := range obs.claims {
		if obs.claims[i].Spec.DesiredState == v1beta1.DesiredStandby {
			return true
		}
	}
	return false
}

// limitsResources reports whether the pool limits a resource of its nodes' capacity
// (cpu, memory, nvidia.com/gpu, ...), not only their number.
func limitsResources(pool *v1beta1.NodePool) bool {
	return len(pool.Spec.Limits.Resources()) > 0
}

// sizing returns, for pools with limits on a resource of their nodes' capacity, how the limits package sizes
// the claims not launched yet, and the capacity of the node a new claim of the pool would
// most likely get: the cheapest instance type of types that meets the pool's
// requirements. Without such limits, or without an offering, both are nil and only the
// node cap counts.
func sizing(pool *v1beta1.NodePool, types []*cloudprovider.InstanceType) (limits.Estimate, corev1.ResourceList, error) {
	if !limitsResources(pool) {
		return nil, nil, nil
	}
	t, _, ok, err := cloudprovider.CheapestOffering(types, v1beta1.CoreRequirements(pool.Spec.Template.Spec.Requirements))
	if err != nil || !ok {
		return nil, nil, err
	}
	return limits.Cheapest(types), t.Capacity, nil
}

// finalize deletes every claim of a deleted pool and releases the pool once they are gone.
func (r *Reconciler) finalize(ctx context.Context, pool *v1beta1.NodePool, claims []v1beta1.NodeClaim) error {
	if !controllerutil.ContainsFinalizer(pool, Finalizer) {
		return nil
	}
	for i := range claims {
		if claims[i].DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, &claims[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	if len(claims) > 0 {
		// The claims' deletions bring the pool back here, through Owns.
		log.FromContext(ctx).V(1).Info("Waiting for the pool's claims to go", "claims", len(claims))
		return nil
	}
	r.forgetPool(pool.Name)
	r.statusWrites.forget(pool.Name)
	r.preStarts.forget(pool.Name)
	r.learnedNotes.forget(pool.Name)
	r.expectations.forget(pool.Name)
	r.creations.forget(pool.Name)
	r.gone.take(pool.Name)
	base := pool.DeepCopy()
	controllerutil.RemoveFinalizer(pool, Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, pool, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
}
