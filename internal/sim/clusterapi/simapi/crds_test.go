package simapi

import (
	"slices"
	"strings"
	"testing"
)

// Every kind has a CRD that CAPI finds by its naming rule (plural.group) and whose
// label tells CAPI the contract version it follows.
func TestCRDsCarryCAPIsContractLabel(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, crd := range crds {
		kinds = append(kinds, crd.Spec.Names.Kind)
		if got := crd.Labels["cluster.x-k8s.io/v1beta2"]; got != "v1alpha1" {
			t.Errorf("%s: label cluster.x-k8s.io/v1beta2 = %q, want v1alpha1", crd.Name, got)
		}
		if want := strings.ToLower(crd.Spec.Names.Kind) + "s.sim.stratos.sh"; crd.Name != want {
			t.Errorf("CRD %s: want the name %s, as CAPI computes it from the kind", crd.Name, want)
		}
	}
	slices.Sort(kinds)
	want := []string{"SimCluster", "SimConfig", "SimConfigTemplate", "SimControlPlane", "SimMachine", "SimMachineTemplate"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
}
