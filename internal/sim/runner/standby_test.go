package runner

import (
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The meter is fed each pool's claims in phase Standby, every pool of the view there:
// one without standby claims counts 0, so that its cost reads 0 rather than missing.
func TestStandbyByPoolCountsStandbyClaimsOfEveryPool(t *testing.T) {
	pool := func(name string) v1beta1.NodePool { return v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	v := &view{
		pools: []v1beta1.NodePool{pool("fixed"), pool("none")},
		claims: map[claimKey]int{
			{"fixed", "fake-1a", "on-demand", "Standby"}: 2, {"fixed", "fake-1b", "on-demand", "Standby"}: 3,
			{"fixed", "fake-1a", "on-demand", "Running"}: 4, {"fixed", "", "", "WarmingUp"}: 1,
			{"none", "fake-1a", "on-demand", "Running"}: 5,
		},
	}
	want := map[string]int{"fixed": 5, "none": 0}
	if got := v.standbyByPool(); !maps.Equal(got, want) {
		t.Errorf("standby by pool %v, want %v", got, want)
	}
}

// A workload is named in the report as scenarios name it: by its name in the default
// namespace, with its namespace elsewhere.
func TestWorkloadKey(t *testing.T) {
	for owner, want := range map[string]string{"default/peak-4": "peak-4", "team-a/peak-4": "team-a/peak-4"} {
		if got := workloadKey(owner); got != want {
			t.Errorf("workloadKey(%q) = %q, want %q", owner, got, want)
		}
	}
}
