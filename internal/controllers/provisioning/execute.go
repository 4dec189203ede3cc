package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
	"github.com/stratos-sh/stratos/internal/scheduling"
	"github.com/stratos-sh/stratos/internal/schedulinginput"
	"github.com/stratos-sh/stratos/internal/windows"
)

// Event reasons of provisioning.
const (
	ReasonNoPoolFits       = "NoNodePoolFits"
	ReasonStandbyExhausted = "StandbyExhausted"
	// ReasonWaitingForVolumes: the pod's volumes keep it waiting whatever the node (a
	// claim missing, or not bound and binding at once), so no node is made for it.
	ReasonWaitingForVolumes = "WaitingForVolumes"
)

// writers bounds the API writes one decision makes at once.
const writers = 32

// execute writes a decision in one pass: standby claims asked to run, new claims
// created, pods nominated to both so the next decision does not count them again, and
// an Event for each pod nothing can take. Each claim lists the pods placed on it in its
// AnnotationPlacedPods (see placedPods), in the write that creates or starts it; a claim
// already on its way gets the pods placed on it added after the decision, by
// placedWriter. Then, once the claims are written, the pods placed on claims get a toleration of their
// claim's reservation where the decision reserves (see reserve).
func (p *Provisioner) execute(ctx context.Context, in scheduling.Input, r scheduling.Result, version uint64) error {
	pools := map[string]*v1beta1.NodePool{}
	for _, sp := range in.Pools {
		pools[sp.Pool.Name] = sp.Pool
	}
	claims := map[string]*v1beta1.NodeClaim{}
	for _, c := range in.Claims {
		claims[c.Claim.Name] = c.Claim
	}
	var mu sync.Mutex
	var errs []error
	record := func(err error) {
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	reserved := decisionReserves(pools, claims, r)
	placed := &placements{}
	// The demand is of the moment decided, not of when each write returns.
	decided := windows.Calendar(p.Calendar, p.Clock).Now()
	workqueue.ParallelizeUntil(ctx, writers, len(r.Starts), func(i int) {
		claim := claims[r.Starts[i].Claim]
		err := p.start(ctx, claim, r.Starts[i].Pods, reserved, placed)
		if err == nil {
			p.recordStart(pools[claim.Spec.NodePool], claim, r.Starts[i].Pods, decided)
		}
		record(err)
	})
	workqueue.ParallelizeUntil(ctx, writers, len(r.Launches), func(i int) {
		err := p.launch(ctx, pools[r.Launches[i].Pool], r.Launches[i], reserved, placed)
		if err == nil {
			p.recordLaunch(pools[r.Launches[i].Pool], r.Launches[i], decided)
		}
		record(err)
	})
	byClaim := map[string][]*corev1.Pod{}
	for pod, claim := range r.InFlight {
		byClaim[claim] = append(byClaim[claim], pod)
	}
	for claim, pods := range byClaim {
		if reserved {
			// Never unmarked here: the claim's Node may carry the taint already.
			p.State.Reserve(claim, true)
		}
		p.State.Nominate(claim, pods, p.Options.NominationTTL)
		placed.add(ctx, "inflight", claim, pods)
	}
	p.listPlacedInFlight(claims, byClaim)
	go p.reserve(ctx, placed.all())
	p.reportUnschedulable(r.Unschedulable, version)
	logUnschedulable(log.FromContext(ctx), r.Unschedulable)
	p.reportExhaustedStandby(pools, in, r)
	metrics.ProvisioningPods.WithLabelValues("existing").Add(float64(len(r.Existing)))
	metrics.ProvisioningPods.WithLabelValues("inflight").Add(float64(len(r.InFlight)))
	metrics.ProvisioningPods.WithLabelValues("unschedulable").Add(float64(len(r.Unschedulable)))
	return errors.Join(errs...)
}

// start asks a standby claim to run, for pods. The pods are nominated first: a claim
// warming up runs as soon as it is asked, and its Node must find its pods known then
// (see nodeclaim's reservation). A nomination to a claim the write did not reach lapses
// by itself, as the claim is not asked to run.
func (p *Provisioner) start(ctx context.Context, claim *v1beta1.NodeClaim, pods []*corev1.Pod, reserved bool, placed *placements) error {
	p.State.Reserve(claim.Name, reserved)
	p.State.Nominate(claim.Name, pods, p.Options.NominationTTL)
	updated := claim.DeepCopy()
	updated.Spec.DesiredState = v1beta1.DesiredRunning
	// The pods it runs for, in the same patch: the list of an earlier run is over.
	delete(updated.Annotations, v1beta1.AnnotationPlacedPods)
	withPlacedPods(updated, pods)
	if err := p.Client.Patch(ctx, updated, client.MergeFrom(claim)); err != nil {
		return fmt.Errorf("asking claim %s to run: %w", claim.Name, err)
	}
	p.State.ObserveWrite(updated, claim.ResourceVersion)
	placed.add(ctx, "start", claim.Name, pods)
	logStart(log.FromContext(ctx), updated, pods)
	metrics.ProvisioningPods.WithLabelValues("start").Add(float64(len(pods)))
	return nil
}

// launch creates a claim for pods from their pool's template.
func (p *Provisioner) launch(ctx context.Context, pool *v1beta1.NodePool, l scheduling.Launch, reserved bool, placed *placements) error {
	claim := schedulinginput.LaunchClaim(pool, l)
	withPlacedPods(claim, l.Pods)
	if err := controllerutil.SetControllerReference(pool, claim, p.Client.Scheme()); err != nil {
		return err
	}
	if err := p.Client.Create(ctx, claim); err != nil {
		return fmt.Errorf("creating a claim of pool %s: %w", pool.Name, err)
	}
	p.State.ObserveWrite(claim, "")
	p.State.Reserve(claim.Name, reserved)
	p.State.Nominate(claim.Name, l.Pods, p.Options.NominationTTL)
	placed.add(ctx, "launch", claim.Name, l.Pods)
	logLaunch(log.FromContext(ctx), claim, l)
	metrics.ProvisioningPods.WithLabelValues("launch").Add(float64(len(l.Pods)))
	return nil
}

// decisionReserves gathers the pods a decision placed on claims and the claims it gave
// them, for reservationMatters. A launch's claim is the one launch will create.
func decisionReserves(pools map[string]*v1beta1.NodePool, claims map[string]*v1beta1.NodeClaim, r scheduling.Result) bool {
	var pods []*corev1.Pod
	var given []*v1beta1.NodeClaim
	for _, s := range r.Starts {
		pods = append(pods, s.Pods...)
		given = append(given, claims[s.Claim])
	}
	for _, l := range r.Launches {
		pods = append(pods, l.Pods...)
		given = append(given, schedulinginput.LaunchClaim(pools[l.Pool], l))
	}
	inFlight := map[string]bool{}
	for pod, claim := range r.InFlight {
		pods = append(pods, pod)
		if !inFlight[claim] {
			inFlight[claim] = true
			given = append(given, claims[claim])
		}
	}
	return reservationMatters(pods, given)
}

// reportUnschedulable gives each pod nothing can take an Event naming, per pool, the
// predicate that failed, or what its volumes wait for, and remembers it until the pod
// or the cluster (its storage objects included) changes.
func (p *Provisioner) reportUnschedulable(pods []scheduling.Unschedulable, version uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, u := range pods {
		if u.Volumes != "" {
			p.Recorder.Eventf(u.Pod, nil, corev1.EventTypeWarning, ReasonWaitingForVolumes, "Provision", "No node is made for the pod until its volumes allow: %s", u.Volumes)
		} else {
			p.Recorder.Eventf(u.Pod, nil, corev1.EventTypeWarning, ReasonNoPoolFits, "Provision", "No node can be made for the pod. %s", unschedulableReason(u))
		}
		p.unschedulable[u.Pod.UID] = seen{resourceVersion: u.Pod.ResourceVersion, version: version}
	}
}

// reportExhaustedStandby tells each pool with a warm pool that had to launch cold
// because every standby claim it had was started: the warm pool was too small.
func (p *Provisioner) reportExhaustedStandby(pools map[string]*v1beta1.NodePool, in scheduling.Input, r scheduling.Result) {
	poolOf, standby := map[string]string{}, map[string]int{}
	for _, c := range in.Claims {
		poolOf[c.Claim.Name] = c.Claim.Spec.NodePool
		if c.Standby {
			standby[c.Claim.Spec.NodePool]++
		}
	}
	started, launched := map[string]int{}, map[string]int{}
	for _, s := range r.Starts {
		started[poolOf[s.Claim]]++
	}
	for _, l := range r.Launches {
		launched[l.Pool]++
	}
	for name, n := range launched {
		pool := pools[name]
		if pool == nil || pool.Spec.Standby.Min == 0 || started[name] < standby[name] {
			continue
		}
		p.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, ReasonStandbyExhausted, "Provision",
			"The warm pool ran dry: started all %d standby nodes and launching %d cold for the rest", started[name], n)
	}
}
