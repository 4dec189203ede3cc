package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1alpha1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// GarbageCollector removes what a crash or an outside change can leave behind: instances
// tagged with the cluster but owned by no claim, claims whose instance is gone, and
// Nodes labelled with a claim that does not exist. It runs when the operator becomes
// leader and then every GCInterval; leaks younger than GCGracePeriod are left alone.
type GarbageCollector struct {
	Client   client.Client
	Cloud    cloudprovider.CloudProvider
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Options  Options
}

// NeedLeaderElection is true: only the leader removes anything.
func (g *GarbageCollector) NeedLeaderElection() bool { return true }

// Start collects at once, then every interval, until ctx is done.
func (g *GarbageCollector) Start(ctx context.Context) error {
	g.Options = g.Options.WithDefaults()
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("garbage-collection"))
	ticker := time.NewTicker(g.Options.GCInterval)
	defer ticker.Stop()
	for {
		if err := g.Collect(ctx); err != nil && ctx.Err() == nil {
			log.FromContext(ctx).Error(err, "Garbage collection failed; trying again at the next interval")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Collect makes one pass.
func (g *GarbageCollector) Collect(ctx context.Context) error {
	instances, err := g.Cloud.List(ctx, map[string]string{v1alpha1.TagCluster: g.Options.ClusterName})
	if err != nil {
		return fmt.Errorf("listing the cluster's instances: %w", err)
	}
	claims := &v1alpha1.NodeClaimList{}
	if err := g.Client.List(ctx, claims); err != nil {
		return err
	}
	byName := make(map[string]*v1alpha1.NodeClaim, len(claims.Items))
	for i := range claims.Items {
		byName[claims.Items[i].Name] = &claims.Items[i]
	}
	return errors.Join(
		g.terminateOrphans(ctx, instances, byName),
		g.removeClaimsWithoutInstance(ctx, instances, claims.Items),
		g.deleteNodesWithoutClaim(ctx, byName),
	)
}

// terminateOrphans terminates instances whose claim does not exist or owns another instance.
func (g *GarbageCollector) terminateOrphans(ctx context.Context, instances []*cloudprovider.Instance, claims map[string]*v1alpha1.NodeClaim) error {
	var errs []error
	for _, instance := range instances {
		if instance.State == cloudprovider.StateShuttingDown || g.Clock.Since(instance.LaunchTime) < g.Options.GCGracePeriod {
			continue
		}
		claim := claims[instance.Tags[v1alpha1.TagNodeClaim]]
		if claim != nil && (claim.Status.InstanceID == "" || claim.Status.InstanceID == instance.ID) {
			continue
		}
		log.FromContext(ctx).Info("Terminating an instance no claim owns", "instance", instance.ID, "claim", instance.Tags[v1alpha1.TagNodeClaim])
		if err := g.Cloud.Terminate(ctx, instance.ID); err != nil && !errors.Is(err, cloudprovider.ErrNotFound) {
			errs = append(errs, err)
			continue
		}
		metrics.GarbageCollected.WithLabelValues("instance").Inc()
		// A Node the orphan registered goes with it; nothing else would remove it.
		errs = append(errs, g.deleteNodesOf(ctx, instance.ProviderID))
	}
	return errors.Join(errs...)
}

// removeClaimsWithoutInstance deletes claims whose instance the cloud has forgotten,
// once it has had the visibility grace to show a fresh one, or is terminating; their
// finalizer then deletes their Node.
func (g *GarbageCollector) removeClaimsWithoutInstance(ctx context.Context, instances []*cloudprovider.Instance, claims []v1alpha1.NodeClaim) error {
	alive := make(map[string]bool, len(instances))
	for _, instance := range instances {
		alive[instance.ID] = instance.State != cloudprovider.StateShuttingDown
	}
	var errs []error
	for i := range claims {
		claim := &claims[i]
		if claim.Status.InstanceID == "" || alive[claim.Status.InstanceID] || !claim.DeletionTimestamp.IsZero() {
			continue
		}
		// The list holds only tagged instances: confirm with the instance itself. The
		// cloud may not show a fresh instance yet; that is not a loss.
		instance, err := g.Cloud.Get(ctx, claim.Status.InstanceID)
		switch {
		case errors.Is(err, cloudprovider.ErrNotFound):
			if notVisibleYet(claim, g.Clock.Now(), g.Options.InstanceVisibilityGrace) {
				continue
			}
		case err != nil:
			errs = append(errs, err)
			continue
		case instance.State != cloudprovider.StateShuttingDown && instance.State != cloudprovider.StateTerminated:
			continue
		}
		g.Recorder.Eventf(claim, nil, corev1.EventTypeWarning, ReasonInstanceGone, "Delete", "Instance %s is gone; removing the claim", claim.Status.InstanceID)
		if err := g.Client.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
			continue
		}
		metrics.GarbageCollected.WithLabelValues("nodeclaim").Inc()
		metrics.NodeClaimsTerminated.WithLabelValues(claim.Spec.NodePool, ReasonInstanceGone).Inc()
	}
	return errors.Join(errs...)
}

// deleteNodesWithoutClaim deletes Nodes labelled as a claim's when the claim is gone,
// such as a Node that registered after its claim was released.
func (g *GarbageCollector) deleteNodesWithoutClaim(ctx context.Context, claims map[string]*v1alpha1.NodeClaim) error {
	nodes := &corev1.NodeList{}
	if err := g.Client.List(ctx, nodes, client.HasLabels{v1alpha1.LabelNodeClaim}); err != nil {
		return err
	}
	var errs []error
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if claims[node.Labels[v1alpha1.LabelNodeClaim]] != nil || g.Clock.Since(node.CreationTimestamp.Time) < g.Options.GCGracePeriod {
			continue
		}
		log.FromContext(ctx).Info("Deleting a Node whose claim is gone", "node", node.Name, "claim", node.Labels[v1alpha1.LabelNodeClaim])
		if err := g.Client.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
			continue
		}
		metrics.GarbageCollected.WithLabelValues("node").Inc()
	}
	return errors.Join(errs...)
}

// deleteNodesOf deletes the Nodes that report providerID.
func (g *GarbageCollector) deleteNodesOf(ctx context.Context, providerID string) error {
	nodes := &corev1.NodeList{}
	if err := g.Client.List(ctx, nodes, client.MatchingFields{indexes.NodeProviderID: providerID}); err != nil {
		return err
	}
	for i := range nodes.Items {
		if err := g.Client.Delete(ctx, &nodes.Items[i]); client.IgnoreNotFound(err) != nil {
			return err
		}
		metrics.GarbageCollected.WithLabelValues("node").Inc()
	}
	return nil
}
