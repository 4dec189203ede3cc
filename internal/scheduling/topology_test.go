package scheduling

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// zonesOf counts a result's launched pods by launch zone.
func zonesOf(r Result) map[string]int {
	out := map[string]int{}
	for _, l := range r.Launches {
		out[strings.Join(l.Zones, ",")] += len(l.Pods)
	}
	return out
}

func TestZoneSpread(t *testing.T) {
	r := solve(t, Input{Pods: pods(6, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")), Pools: []Pool{poolOf("p", smallCatalog())}})
	if got := zonesOf(r); got["zone-a"] != 2 || got["zone-b"] != 2 || got["zone-c"] != 2 {
		t.Fatalf("pods by zone %v, want 2 in each", got)
	}
}

func TestZoneSpreadCountsExistingPods(t *testing.T) {
	existing := pods(2, "old", "100m", "10Mi", labelled("app", "web"))
	in := Input{
		Pods:  pods(1, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")),
		Nodes: []Node{{Node: nodeOf("a", "1", "1Gi", "zone-a"), Pods: existing[:1]}, {Node: nodeOf("b", "1", "1Gi", "zone-b"), Pods: existing[1:]}},
		Pools: []Pool{poolOf("p", smallCatalog())},
	}
	r := solve(t, in)
	if got := zonesOf(r); got["zone-c"] != 1 {
		t.Fatalf("the pod must go to the empty zone-c; got %v", got)
	}
}

func TestHostnameSpread(t *testing.T) {
	r := solve(t, Input{Pods: pods(4, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelHostname, corev1.DoNotSchedule, "web")), Pools: []Pool{poolOf("p", smallCatalog())}})
	if len(r.Launches) != 4 {
		t.Fatalf("%d nodes for 4 pods spread by hostname, want 4", len(r.Launches))
	}
}

// A ScheduleAnyway spread is kept while it can be, and dropped when it cannot.
func TestScheduleAnywayIsAPreference(t *testing.T) {
	pool := poolOf("p", smallCatalog())
	r := solve(t, Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelHostname, corev1.ScheduleAnyway, "web")), Pools: []Pool{pool}})
	if len(r.Launches) != 3 {
		t.Fatalf("%d nodes; the preference can be kept with 3", len(r.Launches))
	}
	pool.NodesLeft = 1
	r = solve(t, Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelHostname, corev1.ScheduleAnyway, "web")), Pools: []Pool{pool}})
	if len(r.Launches) != 1 || len(r.Launches[0].Pods) != 3 || len(r.Unschedulable) != 0 {
		t.Fatalf("with one node allowed all three share it: %+v", r)
	}
}

func TestPodAffinity(t *testing.T) {
	t.Run("hostname self-affinity packs together", func(t *testing.T) {
		r := solve(t, Input{Pods: pods(3, "web", "1", "1Gi", labelled("app", "web"), podAffinity(corev1.LabelHostname, "web", false, false)), Pools: []Pool{poolOf("p", smallCatalog())}})
		if len(r.Launches) != 1 || len(r.Launches[0].Pods) != 3 {
			t.Fatalf("%+v", r.Launches)
		}
	})
	t.Run("zone affinity to an existing pod", func(t *testing.T) {
		in := Input{
			Pods:  pods(1, "client", "1", "1Gi", podAffinity(corev1.LabelTopologyZone, "db", false, false)),
			Nodes: []Node{{Node: nodeOf("db-node", "1", "1Gi", "zone-b"), Pods: pods(1, "db", "1", "1Gi", labelled("app", "db"))}},
			Pools: []Pool{poolOf("p", smallCatalog())},
		}
		r := solve(t, in)
		if len(r.Launches) != 1 || strings.Join(r.Launches[0].Zones, ",") != "zone-b" {
			t.Fatalf("%+v", r.Launches)
		}
	})
	t.Run("affinity to pods that do not exist", func(t *testing.T) {
		r := solve(t, Input{Pods: pods(1, "client", "1", "1Gi", podAffinity(corev1.LabelHostname, "db", false, false)), Pools: []Pool{poolOf("p", smallCatalog())}})
		if len(r.Unschedulable) != 1 || !strings.Contains(r.Unschedulable[0].Reasons["p"], "topology spread or pod affinity") {
			t.Fatalf("%+v", r)
		}
	})
}

func TestPodAntiAffinity(t *testing.T) {
	t.Run("hostname anti-affinity spreads", func(t *testing.T) {
		r := solve(t, Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), podAffinity(corev1.LabelHostname, "web", true, false)), Pools: []Pool{poolOf("p", smallCatalog())}})
		if len(r.Launches) != 3 {
			t.Fatalf("%d nodes, want 3", len(r.Launches))
		}
	})
	t.Run("zone anti-affinity takes one zone each", func(t *testing.T) {
		r := solve(t, Input{Pods: pods(4, "web", "100m", "10Mi", labelled("app", "web"), podAffinity(corev1.LabelTopologyZone, "web", true, false)), Pools: []Pool{poolOf("p", smallCatalog())}})
		if len(r.Launches) != 3 || len(r.Unschedulable) != 1 {
			t.Fatalf("3 zones hold 3 such pods; got %d launches and %d unschedulable", len(r.Launches), len(r.Unschedulable))
		}
	})
	t.Run("an existing pod's anti-affinity keeps others off its node", func(t *testing.T) {
		lonely := pods(1, "lonely", "100m", "10Mi", labelled("app", "lonely"), podAffinity(corev1.LabelHostname, "web", true, false))
		in := Input{
			Pods:  pods(1, "web", "100m", "10Mi", labelled("app", "web")),
			Nodes: []Node{{Node: nodeOf("n", "4", "16Gi", "zone-a"), Pods: lonely}},
			Pools: []Pool{poolOf("p", smallCatalog())},
		}
		if r := solve(t, in); len(r.Existing) != 0 || len(r.Launches) != 1 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("preferred anti-affinity is relaxed when it cannot be kept", func(t *testing.T) {
		pool := poolOf("p", smallCatalog())
		pool.NodesLeft = 1
		r := solve(t, Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), podAffinity(corev1.LabelHostname, "web", true, true)), Pools: []Pool{pool}})
		if len(r.Launches) != 1 || len(r.Launches[0].Pods) != 3 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("required anti-affinity is not relaxed", func(t *testing.T) {
		pool := poolOf("p", smallCatalog())
		pool.NodesLeft = 1
		r := solve(t, Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), podAffinity(corev1.LabelHostname, "web", true, false)), Pools: []Pool{pool}})
		if len(r.Launches) != 1 || len(r.Unschedulable) != 2 {
			t.Fatalf("%+v", r)
		}
	})
}
