package ec2nodeclass

import (
	"context"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// sweeper removes the instance profiles Stratos made for EC2NodeClasses that are gone,
// when the finalizer could not: a class whose finalizer was taken off by hand, or the
// CRD deleted with its objects. It runs on the leader, once the caches have synced, at
// start and every SweepInterval.
type sweeper struct{ r *AWSReconciler }

// NeedLeaderElection is true: only the leader changes IAM.
func (s *sweeper) NeedLeaderElection() bool { return true }

// Start sweeps until ctx ends.
func (s *sweeper) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, s.sweep, s.r.Options.SweepInterval)
	return nil
}

// sweep removes every profile of the cluster whose class does not exist and is not
// used by a claim (whose instance may still run with the profile).
func (s *sweeper) sweep(ctx context.Context) {
	logger := log.FromContext(ctx).WithName("instance-profile-sweep")
	classes := &v1beta1.EC2NodeClassList{}
	claims := &v1beta1.NodeClaimList{}
	if err := s.r.Client.List(ctx, classes); err != nil {
		logger.Error(err, "Listing the EC2NodeClasses")
		return
	}
	if err := s.r.Client.List(ctx, claims); err != nil {
		logger.Error(err, "Listing the NodeClaims")
		return
	}
	keep := map[string]bool{}
	for _, class := range classes.Items {
		keep[class.Name] = true
	}
	for _, claim := range claims.Items {
		if claim.Spec.NodeClassRef.Kind == "EC2NodeClass" {
			keep[claim.Spec.NodeClassRef.Name] = true
		}
	}
	removed, err := s.r.Resolver.SweepInstanceProfiles(ctx, func(class string) bool { return keep[class] })
	for _, name := range removed {
		logger.Info("Removed an instance profile no EC2NodeClass refers to", "instanceProfile", name)
	}
	if err != nil {
		logger.Error(err, "Sweeping the instance profiles")
	}
}
