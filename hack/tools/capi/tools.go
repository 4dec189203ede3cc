//go:build tools

// Package tools pins the Cluster API core manager for hack/tools.sh.
package tools

import _ "sigs.k8s.io/cluster-api/core"
