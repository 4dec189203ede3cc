package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/indexes"
	"github.com/stratos-sh/stratos/internal/metrics"
)

// GarbageCollector removes what a crash or an outside change can leave behind: instances
// tagged with the cluster but owned by no claim, and Nodes labelled with a claim that
// does not exist; claims whose instance the cluster's list lacks it hands to the
// lifecycle controller through Recheck. It runs when the operator becomes leader and
// then every GCInterval; leaks younger than GCGracePeriod are left alone.
type GarbageCollector struct {
	Client  client.Client
	Cloud   cloudprovider.CloudProvider
	Clock   clock.PassiveClock
	Options Options
	// Recheck is the lifecycle controller's; nil asks nothing.
	Recheck *Recheck
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
	instances, err := g.Cloud.List(ctx, map[string]string{v1beta1.TagCluster: g.Options.ClusterName})
	if err != nil {
		return fmt.Errorf("listing the cluster's instances: %w", err)
	}
	claims := &v1beta1.NodeClaimList{}
	if err := g.Client.List(ctx, claims); err != nil {
		return err
	}
	byName := make(map[string]*v1beta1.NodeClaim, len(claims.Items))
	for i := range claims.Items {
		byName[claims.Items[i].Name] = &claims.Items[i]
	}
	g.askAboutClaimsWithoutInstance(instances, claims.Items)
	return errors.Join(
		g.terminateOrphans(ctx, instances, byName),
		g.deleteNodesWithoutClaim(ctx, byName),
	)
}

// terminateOrphans terminates instances whose claim does not exist or owns another instance.
func (g *GarbageCollector) terminateOrphans(ctx context.Context, instances []*cloudprovider.Instance, claims map[string]*v1beta1.NodeClaim) error {
	var errs []error
	for _, instance := range instances {
		if instance.State == cloudprovider.StateShuttingDown || g.Clock.Since(instance.LaunchTime) < g.Options.GCGracePeriod {
			continue
		}
		claim := claims[instance.Tags[v1beta1.TagNodeClaim]]
		if claim != nil && (claim.Status.InstanceID == "" || claim.Status.InstanceID == instance.ID) {
			continue
		}
		log.FromContext(ctx).Info("Terminating an instance no claim owns", "instance", instance.ID, "claim", instance.Tags[v1beta1.TagNodeClaim])
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

// askAboutClaimsWithoutInstance asks the lifecycle controller to look at the claims
// whose instance the list of the cluster's live instances lacks, once it has had the
// visibility grace to show a fresh one. The list cannot tell an instance gone from one
// whose cluster tag was removed, nor one instance gone from a whole pool's answer gone
// wrong, so garbage collection deletes no claim on its word: the lifecycle controller
// asks about the instance itself, with the rest of its pool, and removes the claim or
// waits (see vanished).
func (g *GarbageCollector) askAboutClaimsWithoutInstance(instances []*cloudprovider.Instance, claims []v1beta1.NodeClaim) {
	alive := make(map[string]bool, len(instances))
	for _, instance := range instances {
		alive[instance.ID] = instance.State != cloudprovider.StateShuttingDown
	}
	for i := range claims {
		claim := &claims[i]
		if claim.Status.InstanceID == "" || alive[claim.Status.InstanceID] || !claim.DeletionTimestamp.IsZero() ||
			notVisibleYet(claim, g.Clock.Now(), g.Options.InstanceVisibilityGrace) {
			continue
		}
		g.Recheck.ask(claim)
	}
}

// deleteNodesWithoutClaim deletes Nodes labelled as a claim's when the claim is gone,
// such as a Node that registered after its claim was released.
func (g *GarbageCollector) deleteNodesWithoutClaim(ctx context.Context, claims map[string]*v1beta1.NodeClaim) error {
	nodes := &corev1.NodeList{}
	if err := g.Client.List(ctx, nodes, client.HasLabels{v1beta1.LabelNodeClaim}); err != nil {
		return err
	}
	var errs []error
	for i := range nodes.Items {
		node := &nodes.Items[i]
		if claims[node.Labels[v1beta1.LabelNodeClaim]] != nil || g.Clock.Since(node.CreationTimestamp.Time) < g.Options.GCGracePeriod {
			continue
		}
		log.FromContext(ctx).Info("Deleting a Node whose claim is gone", "node", node.Name, "claim", node.Labels[v1beta1.LabelNodeClaim])
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
