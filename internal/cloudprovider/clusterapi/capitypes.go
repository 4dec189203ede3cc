package clusterapi

import (
	// The typed Machine and Cluster of CAPI's api module (v1beta2, the storage version).
	_ "sigs.k8s.io/cluster-api/api/core/v1beta2"
)
