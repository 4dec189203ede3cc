package limits

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Cheapest estimates a claim not launched yet by the capacity of the cheapest available
// instance type among types that the claim's requirements allow — the one its launch
// tries first — and by the resources it was made for when none does. Claims with the
// same requirements share one answer.
func Cheapest(types []*cloudprovider.InstanceType) Estimate {
	known := map[string]corev1.ResourceList{}
	return func(claim *v1beta1.NodeClaim) corev1.ResourceList {
		key := fmt.Sprint(claim.Spec.Requirements)
		if capacity, ok := known[key]; ok {
			return orRequests(capacity, claim)
		}
		var capacity corev1.ResourceList
		if t, _, ok, err := cloudprovider.CheapestOffering(types, v1beta1.CoreRequirements(claim.Spec.Requirements)); err == nil && ok {
			capacity = t.Capacity
		}
		known[key] = capacity
		return orRequests(capacity, claim)
	}
}

func orRequests(capacity corev1.ResourceList, claim *v1beta1.NodeClaim) corev1.ResourceList {
	if capacity == nil {
		return claim.Spec.Resources.Requests
	}
	return capacity
}
