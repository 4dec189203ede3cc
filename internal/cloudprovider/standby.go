package cloudprovider

import (
	"slices"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// StandbyCapacityTypes are the capacity types whose instances can be stopped and started
// again, and so stand by in a warm pool: on-demand, on EC2 as in the fake cloud. A spot
// instance is reclaimed by the cloud rather than kept stopped for its owner, so spot is
// for cold launches only.
var StandbyCapacityTypes = []string{v1beta1.CapacityTypeOnDemand}

// CanStandBy reports whether an offering of this capacity type can stand by.
func CanStandBy(capacityType string) bool {
	return slices.Contains(StandbyCapacityTypes, capacityType)
}
