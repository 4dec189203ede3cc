package aws

import (
	"maps"
	"slices"
	"testing"

	"github.com/stratos-sh/stratos/api/v1alpha1"
)

// The user data carries only the labels a kubelet may register with: a kubelet given
// another label under kubernetes.io or k8s.io does not start, and the operator sets
// those at registration instead.
func TestTheKubeletRegistersOnlyWithLabelsItMaySet(t *testing.T) {
	labels := map[string]string{
		v1alpha1.LabelNodePool:                      "pool",
		v1alpha1.LabelNodeClaim:                     "pool-abc",
		"team":                                      "a",
		"example.com/tier":                          "web",
		"node.kubernetes.io/lifecycle":              "standby",
		"sub.node.kubernetes.io/x":                  "1",
		"kubelet.kubernetes.io/y":                   "2",
		"topology.kubernetes.io/zone":               "us-east-1a",
		"kubernetes.io/arch":                        "amd64",
		"node-role.kubernetes.io/worker":            "",
		"example.k8s.io/z":                          "3",
		"kubernetes.io/owned":                       "4",
		"node-restriction.kubernetes.io/dedicated":  "5",
		"x.node-restriction.kubernetes.io/reserved": "6",
	}
	got := slices.Sorted(maps.Keys(sharedLabels(labels)))
	want := []string{"example.com/tier", "kubelet.kubernetes.io/y", "kubernetes.io/arch", "node.kubernetes.io/lifecycle",
		v1alpha1.LabelNodePool, "sub.node.kubernetes.io/x", "team", "topology.kubernetes.io/zone"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("labels in the user data: %v\nwant %v", got, want)
	}
}
