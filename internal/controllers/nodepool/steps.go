package nodepool

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/budgets"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/limits"
	"github.com/stratos-sh/stratos/internal/nodeclass"
	"github.com/stratos-sh/stratos/internal/windows"
)

// pass is what one Reconcile of a pool reads, decides and carries from step to step.
type pass struct {
	pool   *v1beta1.NodePool
	claims []v1beta1.NodeClaim
	// written is the status the cache shows; before is the pool with the status the
	// last pass computed, written or held pending (see statusWrites).
	written *v1beta1.NodePoolStatus
	before  *v1beta1.NodePool
	// class is the pool's node class, nil when it cannot be read; classErr says why.
	class    client.Object
	classErr error
	// current is what the pool's template and class make a claim from now.
	current     claimtemplate.Current
	targets     windows.Targets
	learnedNext time.Time
	obs         observation
	byPhase     map[v1beta1.NodeClaimPhase]int32
	result      ctrl.Result
	// done ends the pass after the step that set it, with result.
	done bool
}

// poolStep is one named step of a pass; it ends the pass with an error, or by setting
// done.
type poolStep struct {
	name string
	run  func(context.Context, *pass) error
}

// steps are a pass over a pool, in order. The status is computed from what the steps
// before saw and did, and written once, last.
func (r *Reconciler) steps() []poolStep {
	return []poolStep{
		{"read", r.read},
		{"finalize", r.finalizeIfDeleted},
		{"addFinalizer", r.addFinalizer},
		{"targets", r.readTargets},
		{"stops", r.readStops},
		{"killSwitch", r.killSwitch},
		{"nodeClass", r.readClass},
		{"cacheCaughtUp", r.cacheCaughtUp},
		{"drift", r.drift},
		{"warmupFailures", r.warmupFailures},
		{"scale", r.scaleIfAllowed},
		{"status", r.computeStatus},
		{"price", r.price},
		{"metrics", r.metrics},
		{"events", r.announce},
		{"requeue", r.requeue},
		{"writeStatus", r.writeStatusStep},
	}
}

// read gets the pool and its claims; a pool gone ends the pass.
func (r *Reconciler) read(ctx context.Context, p *pass) error {
	pool := &v1beta1.NodePool{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: p.pool.Name}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone without the finalizer's pass: removed by force.
			r.forgetPool(p.pool.Name)
			r.statusWrites.forget(p.pool.Name)
			p.done = true
		}
		return client.IgnoreNotFound(err)
	}
	claims := &v1beta1.NodeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingFields{indexes.ClaimNodePool: pool.Name}); err != nil {
		return err
	}
	p.pool, p.claims = pool, claims.Items
	return nil
}

// finalizeIfDeleted removes the claims of a deleted pool, then the pool (see finalize).
func (r *Reconciler) finalizeIfDeleted(ctx context.Context, p *pass) error {
	if p.pool.DeletionTimestamp.IsZero() {
		return nil
	}
	p.done = true
	return r.finalize(ctx, p.pool, p.claims)
}

// addFinalizer keeps the pool, once deleted, until its claims are gone.
func (r *Reconciler) addFinalizer(ctx context.Context, p *pass) error {
	if controllerutil.ContainsFinalizer(p.pool, Finalizer) {
		return nil
	}
	base := p.pool.DeepCopy()
	controllerutil.AddFinalizer(p.pool, Finalizer)
	return r.Client.Patch(ctx, p.pool, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// readTargets starts from the status the last pass computed, and reads the targets of
// the active window and what a learned pool learned.
func (r *Reconciler) readTargets(ctx context.Context, p *pass) error {
	p.written = r.statusWrites.begin(p.pool)
	p.before = p.pool.DeepCopy()
	var windowErr error
	p.targets, windowErr = windows.For(p.pool, windows.Calendar(r.Calendar, r.Clock).Now())
	next, err := r.learn(ctx, p.pool, p.claims, &p.targets)
	if err != nil {
		return err
	}
	p.learnedNext = next
	p.obs = observation{target: p.targets.MinStandby, targets: p.targets, windowErr: windowErr, claims: p.claims}
	p.obs.target = r.withBufferRoom(p.pool, p.targets, p.obs.target)
	return nil
}

// readStops reads the disruption budgets, and whether the pool is paused or switched off.
func (r *Reconciler) readStops(_ context.Context, p *pass) error {
	p.obs.budgetBlocking, p.obs.budgetErr = budgets.Check(p.pool.Spec.Disruption.Budgets, r.Clock.Now())
	switch {
	case p.pool.Spec.KillSwitch:
		p.obs.stopped = ReasonKillSwitch
	case p.pool.Spec.Paused:
		p.obs.stopped = ReasonPaused
	}
	return nil
}

// killSwitch removes every claim of a pool whose kill switch is on. It needs no node
// class: the switch works even when the class is gone.
func (r *Reconciler) killSwitch(ctx context.Context, p *pass) error {
	if p.obs.stopped != ReasonKillSwitch {
		return nil
	}
	return r.removeAll(ctx, p.claims)
}

// readClass reads the pool's node class; a class that does not exist is said in the status.
func (r *Reconciler) readClass(ctx context.Context, p *pass) error {
	p.class, p.classErr = nodeclass.Get(ctx, r.Client, p.pool.Spec.Template.Spec.NodeClassRef)
	switch {
	case p.obs.stopped == ReasonKillSwitch:
		return nil
	case apierrors.IsNotFound(p.classErr):
		p.obs.classMissing = true
		return nil
	default:
		return p.classErr
	}
}

// acting reports whether the pass plans the pool's claims: its class is there and its
// kill switch off.
func (p *pass) acting() bool { return p.obs.stopped != ReasonKillSwitch && p.classErr == nil }

// cacheCaughtUp ends the pass, to plan again shortly, while the cache does not show this
// controller's last writes.
func (r *Reconciler) cacheCaughtUp(_ context.Context, p *pass) error {
	if p.acting() && !r.expectations.met(p.pool.Name, p.claims, r.Clock.Now()) {
		p.result, p.done = ctrl.Result{RequeueAfter: conflictRetry}, true
	}
	return nil
}

// drift marks the claims made from another template or class than the current ones.
func (r *Reconciler) drift(ctx context.Context, p *pass) error {
	if !p.acting() {
		return nil
	}
	current, err := claimtemplate.CurrentOf(p.pool, p.class)
	if err != nil {
		return err
	}
	p.current = current
	return r.markDrift(ctx, p.pool, p.claims, current)
}

// warmupFailures records the warm-ups that failed since the last pass, which back the
// pool off.
func (r *Reconciler) warmupFailures(_ context.Context, p *pass) error {
	if !p.acting() {
		return nil
	}
	opts := r.Options.WithDefaults()
	rec, counted := noteFailures(p.pool.Status.WarmupFailures, failureRecord{
		poolGeneration: p.pool.Generation, classGeneration: p.class.GetGeneration(), claims: p.claims,
		gone: r.gone.take(p.pool.Name), base: opts.WarmupBackoff, ceiling: opts.WarmupBackoffMax,
	}, r.Clock.Now())
	p.pool.Status.WarmupFailures, p.obs.failures = rec, rec
	countFailures(p.pool.Name, counted)
	return nil
}

// scaleIfAllowed brings the claims to the plan, unless the pool is paused or its class
// cannot launch nodes yet.
func (r *Reconciler) scaleIfAllowed(ctx context.Context, p *pass) error {
	if !p.acting() || p.obs.stopped == ReasonPaused {
		return nil
	}
	if ready, reason, message := nodeclass.Ready(p.class); !ready {
		// Nothing launches with a class that has not resolved: the pool waits for it.
		p.obs.classNotReady = reason + ": " + message
		return nil
	}
	if ok, _, message := nodeclass.CanStandBy(p.class); !ok {
		p.obs.standbyRefused = withoutStandby(&p.obs, message)
	}
	p.obs.standbyJudged = true
	if err := r.scale(ctx, p.pool, p.class, p.current, &p.obs); err != nil {
		return err
	}
	p.obs.nextExpiry = nextExpiry(p.pool, p.claims, r.Clock.Now())
	return nil
}

// computeStatus sets the pool's status from what the pass saw and did.
func (r *Reconciler) computeStatus(_ context.Context, p *pass) error {
	p.byPhase = writeStatus(p.pool, p.obs)
	return nil
}

// price lists the instance types the warm pool's cost needs, when the pass did not.
func (r *Reconciler) price(ctx context.Context, p *pass) error {
	if p.obs.types != nil || p.class == nil || !hasStandby(p.claims) {
		return nil
	}
	var err error
	if p.obs.types, err = r.Cloud.InstanceTypes(ctx, p.class); err != nil {
		log.FromContext(ctx).V(1).Info("The warm pool's cost is not priced: the instance types cannot be listed", "error", err.Error())
	}
	return nil
}

// metrics records the pool's series.
func (r *Reconciler) metrics(_ context.Context, p *pass) error {
	if p.obs.usage == nil {
		used := limits.Used(pointers(p.claims), nil)
		p.obs.usage = &used
	}
	r.recordPool(p.pool, p.byPhase, standbyCensus(p.claims, p.obs.types), limitSeries(p.pool.Spec.Limits, p.targets.MaxNodes, *p.obs.usage))
	recordBackoff(p.pool, r.Clock.Now())
	recordUnhealthy(p.pool.Name, p.claims)
	return nil
}

// announce tells in Events the conditions that turned bad in this pass.
func (r *Reconciler) announce(ctx context.Context, p *pass) error {
	pool, before := p.pool, p.before
	if degraded := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded); degraded != nil && degraded.Status == metav1.ConditionTrue &&
		!degradedFor(before, degraded.Reason) {
		// The message is no format: it quotes claims' messages, which may hold a %.
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, degraded.Reason, "Scale", "%s", degraded.Message)
		if p.obs.windowErr != nil {
			log.FromContext(ctx).Error(p.obs.windowErr, "The pool's windows cannot be read; its spec's targets hold")
		}
	}
	if p.obs.standbyRefused != "" && !meta.IsStatusConditionFalse(before.Status.Conditions, v1beta1.ConditionWarmPoolSupported) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, nodeclass.ReasonStandbyUnsupported, "Scale", "%s", p.obs.standbyRefused)
	}
	if valid := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionBudgetsValid); valid.Status == metav1.ConditionFalse &&
		!meta.IsStatusConditionFalse(before.Status.Conditions, v1beta1.ConditionBudgetsValid) {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, valid.Reason, "Disrupt", valid.Message)
	}
	return nil
}

// requeue asks for the next pass when something this pass knows of changes the plan:
// nothing else would bring the pool here at that moment.
func (r *Reconciler) requeue(_ context.Context, p *pass) error {
	obs := p.obs
	soon := func(wait time.Duration) {
		if p.result.RequeueAfter == 0 || wait < p.result.RequeueAfter {
			p.result.RequeueAfter = wait
		}
	}
	if obs.held > 0 {
		// Held standby nodes count again once their offering's mark expires.
		soon(heldRecheck)
	}
	if obs.throttled {
		// The pool creates the rest as its bucket of creations refills.
		soon(r.Options.WithDefaults().refill())
	}
	if obs.raced {
		// A claim it meant to remove changed: the next pass plans on what it is now.
		soon(conflictRetry)
	}
	if obs.paced && hasSchedule(p.pool) {
		// A budget holding replacements back may end, or a looser one start, on the minute.
		soon(budgetRecheck)
	}
	if backingOff(obs.failures) {
		// A backing-off pool tries again at its retry time. Past it, the probe it warms
		// wakes it: a retry time in the past must not requeue it at once, again and again.
		if wait := obs.failures.RetryAfter.Sub(r.Clock.Now()); wait > 0 {
			soon(wait)
		}
	}
	// A window opening or closing, a standby claim expiring, or a learned pool's next
	// step changes the plan then.
	for _, at := range []time.Time{obs.nextExpiry, p.targets.Next, p.learnedNext} {
		if !at.IsZero() {
			soon(max(r.onRealClock(at.Sub(windows.Calendar(r.Calendar, r.Clock).Now())), conflictRetry))
		}
	}
	return nil
}

// writeStatusStep writes the status the pass computed (see writeStatus).
func (r *Reconciler) writeStatusStep(ctx context.Context, p *pass) error {
	result, err := r.writeStatus(ctx, p.pool, p.written, p.result)
	p.result = result
	return err
}
