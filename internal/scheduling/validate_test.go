package scheduling

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// A provider that offers a type without a zone must not crash the simulation: a pod
// whose zone matters goes where a zone is known, and one that cannot is unschedulable.
// On main before the fix, a pod whose zone mattered only because another pod's zone
// spread selects it opened a new claim with no offering left, and result.go panicked.
func TestAnOfferingWithoutAZoneIsNoCrash(t *testing.T) {
	zoneless := instanceTypeOf("zoneless", "4", "16Gi", 0.05, "")
	spread := spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")
	burst := func() []*corev1.Pod {
		// The big pods go first; their zone matters to the spread pod that selects them.
		return append(pods(2, "counted", "2", "1Gi", labelled("app", "web")), podOf("spread", "1", "1Gi", labelled("app", "web"), spread))
	}

	only := Solve(Input{Pods: burst(), Pools: []Pool{poolOf("p", []*cloudprovider.InstanceType{zoneless})}})
	if len(only.Launches) != 0 || len(only.Unschedulable) != 3 {
		t.Fatalf("with only zoneless offerings, launches %d and unschedulable %d; want 0 and 3", len(only.Launches), len(only.Unschedulable))
	}

	mixed := []*cloudprovider.InstanceType{zoneless, instanceTypeOf("zoned", "4", "16Gi", 0.1, "zone-a", "zone-b")}
	r := Solve(Input{Pods: burst(), Pools: []Pool{poolOf("p", mixed)}})
	if len(r.Unschedulable) != 0 {
		t.Fatalf("pods unschedulable: %+v", r.Unschedulable)
	}
	for _, l := range r.Launches {
		if l.InstanceTypes[0] != "zoned" {
			t.Fatalf("a launch uses %v; a node bought without a zone cannot be placed", l.InstanceTypes)
		}
	}
}

// More than 64 zones is refused with a clear reason, not a crash nor silent mistakes.
func TestMoreZonesThanTheSimulationHandlesAreRefused(t *testing.T) {
	zones := make([]string, MaxZones+1)
	for i := range zones {
		zones[i] = fmt.Sprintf("zone-%d", i)
	}
	in := Input{
		Pods:  pods(2, "web", "1", "1Gi", labelled("app", "web"), spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")),
		Pools: []Pool{poolOf("p", []*cloudprovider.InstanceType{instanceTypeOf("t", "4", "16Gi", 0.1, zones...)})},
	}
	if err := in.Validate(); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Fatalf("Validate = %v, want an error naming the limit", err)
	}
	r := Solve(in)
	if len(r.Unschedulable) != 2 || len(r.Launches) != 0 || !strings.Contains(r.Unschedulable[0].Reasons[NoPools], "at most 64 zones") {
		t.Fatalf("result %+v: want every pod refused with the reason", r)
	}
	in.Pools[0].InstanceTypes = []*cloudprovider.InstanceType{instanceTypeOf("t", "4", "16Gi", 0.1, zones[:MaxZones]...)}
	if err := in.Validate(); err != nil {
		t.Fatalf("exactly %d zones must be accepted: %v", MaxZones, err)
	}
	if r := solve(t, in); len(r.Unschedulable) != 0 {
		t.Fatalf("with %d zones: %+v", MaxZones, r.Unschedulable)
	}
}
