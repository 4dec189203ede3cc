// Package invariants checks what must always hold between the cloud and the cluster once
// garbage collection has had its grace period: every instance Stratos owns has exactly
// one claim, every claim exactly one instance, and every Node of Stratos's (labelled with
// a claim, or run by an instance tagged with the cluster) a claim. A claim whose instance
// lives on without the cluster's tag keeps it, and must say so (condition InstanceLost,
// reason OwnershipLost).
package invariants

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Cloud is what the checker needs of a cloud: every instance it knows.
type Cloud interface {
	Instances() []cloudprovider.Instance
}

// Report counts what the check saw, and each kind of violation.
type Report struct {
	Instances, Claims, Nodes int
	// LeakedInstances are live instances of the cluster that no claim owns.
	LeakedInstances int
	// DuplicateInstances are live instances beyond the first for one claim, or shared
	// by several claims.
	DuplicateInstances int
	// OrphanClaims have no live instance.
	OrphanClaims int
	// LostInstances are live instances of claims that are not the cluster's, whose claims
	// say so: a state Stratos waits out, not a violation.
	LostInstances int
	// OrphanNodes are Nodes of Stratos's with no claim.
	OrphanNodes int
}

// Check returns every violation found, joined, or nil. Instances terminating or
// terminated are no longer owned and are not counted.
func Check(ctx context.Context, c client.Reader, cloud Cloud, clusterName string) (Report, error) {
	claims := &v1beta1.NodeClaimList{}
	if err := c.List(ctx, claims); err != nil {
		return Report{}, err
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return Report{}, err
	}
	live := map[string]cloudprovider.Instance{}
	foreign := map[string]bool{}
	ourProviderIDs := map[string]bool{}
	for _, instance := range cloud.Instances() {
		alive := instance.State != cloudprovider.StateShuttingDown && instance.State != cloudprovider.StateTerminated
		if instance.Tags[v1beta1.TagCluster] != clusterName {
			foreign[instance.ID] = alive
			continue
		}
		ourProviderIDs[instance.ProviderID] = true
		if alive {
			live[instance.ID] = instance
		}
	}

	var violations []error
	var r Report
	claimsOfInstance := map[string][]string{}
	claimOfProvider := map[string]string{}
	for _, claim := range claims.Items {
		id := claim.Status.InstanceID
		switch {
		case id == "":
			r.OrphanClaims++
			violations = append(violations, fmt.Errorf("claim %s has no instance", claim.Name))
		case foreign[id]:
			if c := meta.FindStatusCondition(claim.Status.Conditions, v1beta1.ConditionInstanceLost); c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1beta1.ReasonOwnershipLost {
				violations = append(violations, fmt.Errorf("claim %s owns instance %s, which is not the cluster's, and does not say so: %+v", claim.Name, id, c))
			}
			r.LostInstances++
		case !hasKey(live, id):
			r.OrphanClaims++
			violations = append(violations, fmt.Errorf("claim %s owns instance %s, which is gone", claim.Name, id))
		default:
			claimsOfInstance[id] = append(claimsOfInstance[id], claim.Name)
		}
		if claim.Status.ProviderID != "" {
			claimOfProvider[claim.Status.ProviderID] = claim.Name
		}
	}
	instancesOfClaim := map[string][]string{}
	for id, instance := range live {
		owners := claimsOfInstance[id]
		if len(owners) == 0 {
			r.LeakedInstances++
		} else if len(owners) > 1 {
			r.DuplicateInstances++
		}
		if len(owners) != 1 {
			violations = append(violations, fmt.Errorf("instance %s (tagged for claim %q) has %d claims: %v", id, instance.Tags[v1beta1.TagNodeClaim], len(owners), owners))
		}
		name := instance.Tags[v1beta1.TagNodeClaim]
		instancesOfClaim[name] = append(instancesOfClaim[name], id)
	}
	for name, ids := range instancesOfClaim {
		if len(ids) > 1 {
			r.DuplicateInstances += len(ids) - 1
			violations = append(violations, fmt.Errorf("claim %s has %d live instances: %v (a duplicate launch)", name, len(ids), ids))
		}
	}
	ours := 0
	for _, node := range nodes.Items {
		if !ourProviderIDs[node.Spec.ProviderID] && node.Labels[v1beta1.LabelNodeClaim] == "" {
			continue
		}
		ours++
		if _, ok := claimOfProvider[node.Spec.ProviderID]; !ok {
			r.OrphanNodes++
			violations = append(violations, fmt.Errorf("node %s (%s) has no claim", node.Name, node.Spec.ProviderID))
		}
	}
	r.Instances, r.Claims, r.Nodes = len(live), len(claims.Items), ours
	return r, errors.Join(violations...)
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
