package nodepool

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// removeStandby deletes the standby claims named in remove, each only as this pass read
// it (claims): the deletion carries its UID and resource version as preconditions, so a
// claim provisioning asked to run since (for pods that came that moment) is refused by
// the API server with a conflict and runs; the next pass plans again on what it is now.
// staleBecause says which were stale, and why.
func (r *Reconciler) removeStandby(ctx context.Context, pool *v1beta1.NodePool, remove []string, claims []*v1beta1.NodeClaim,
	staleBecause map[string]v1beta1.DisruptionReason, obs *observation) error {
	read := map[string]*v1beta1.NodeClaim{}
	for _, c := range claims {
		read[c.Name] = c
	}
	removed := 0
	for _, name := range remove {
		claim := &v1beta1.NodeClaim{}
		claim.Name = name
		uid, version := read[name].UID, read[name].ResourceVersion
		err := r.Client.Delete(ctx, claim, client.Preconditions{UID: &uid, ResourceVersion: &version})
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).V(1).Info("A standby claim changed since it was read; not removing it", "claim", name)
			obs.raced = true
			continue
		}
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing standby claim %s: %w", name, err)
		}
		removed++
		r.expectations.expect(pool.Name, name, true, r.Clock.Now())
		reason := "Excess"
		if because := staleBecause[name]; because != "" {
			reason = string(because)
			r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, reason, "Replace", "Standby node is %s; a fresh one stands by in its place", strings.ToLower(reason))
		}
		metrics.NodeClaimsTerminated.WithLabelValues(pool.Name, reason).Inc()
	}
	if removed > 0 {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, "ScaledDown", "Scale", "Removed %d standby claims that were stale or above the pool's ceiling", removed)
	}
	return nil
}
