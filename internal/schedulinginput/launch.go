package schedulinginput

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// LaunchClaim is the claim to create for a launch the simulation decided: the pool's
// template asked to run, narrowed to the instance types that hold the launch's pods (and
// to the zones and capacity types the pods asked for), sized for what they request.
func LaunchClaim(pool *v1beta1.NodePool, l scheduling.Launch) *v1beta1.NodeClaim {
	claim := claimtemplate.NewClaim(pool, v1beta1.DesiredRunning)
	narrow := func(key string, values []string) {
		if len(values) > 0 {
			claim.Spec.Requirements = append(claim.Spec.Requirements, v1beta1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values})
		}
	}
	narrow(corev1.LabelInstanceTypeStable, l.InstanceTypes)
	narrow(corev1.LabelTopologyZone, l.Zones)
	narrow(v1beta1.LabelCapacityType, l.CapacityTypes)
	claim.Spec.Resources.Requests = l.Requests
	return claim
}
