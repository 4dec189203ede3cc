package scheduling

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/stratos-sh/stratos/internal/scheduling/verifier"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// solveWithStorage solves in with the volumes of f and checks the result with the
// verifier, which reads f's objects itself.
func solveWithStorage(t *testing.T, f *storageFixture, in Input) Result {
	t.Helper()
	f.fill(t, &in)
	r := Solve(in)
	verifyWithStorage(t, in, r, f.verifierStorage())
	return r
}

// A bound volume's node affinity keeps its pod in the volume's zone: off a node with
// room in another zone, onto a new claim pinned to the zone, whichever label the volume
// names the zone by.
func TestABoundVolumeKeepsItsPodInItsZone(t *testing.T) {
	for _, key := range []string{corev1.LabelTopologyZone, volumes.EBSZoneLabel, corev1.LabelFailureDomainBetaZone} {
		t.Run(key, func(t *testing.T) {
			f := newStorageFixture()
			f.boundClaim("data", key, "zone-a")
			pod := podOf("db-0", "1", "1Gi", mounting("data"))
			in := Input{
				Pods:  []*corev1.Pod{pod},
				Nodes: []Node{{Node: nodeOf("node-b", "4", "16Gi", "zone-b")}},
				Pools: []Pool{poolOf("p", smallCatalog())},
			}
			r := solveWithStorage(t, f, in)
			if _, ok := r.Existing[pod]; ok {
				t.Fatalf("the pod went on node-b in zone-b; its volume is in zone-a")
			}
			if len(r.Launches) != 1 || !slices.Equal(r.Launches[0].Zones, []string{"zone-a"}) {
				t.Fatalf("want one launch pinned to zone-a, got %+v", r.Launches)
			}
		})
	}
}

// A node in the volume's zone with room takes the pod: no launch.
func TestABoundVolumesPodGoesOnANodeInItsZone(t *testing.T) {
	f := newStorageFixture()
	f.boundClaim("data", corev1.LabelTopologyZone, "zone-a")
	pod := podOf("db-0", "1", "1Gi", mounting("data"))
	in := Input{
		Pods:  []*corev1.Pod{pod},
		Nodes: []Node{{Node: nodeOf("node-b", "4", "16Gi", "zone-b")}, {Node: nodeOf("node-a", "4", "16Gi", "zone-a")}},
		Pools: []Pool{poolOf("p", smallCatalog())},
	}
	r := solveWithStorage(t, f, in)
	if r.Existing[pod] != "node-a" || len(r.Launches) != 0 {
		t.Fatalf("want the pod on node-a and no launch, got existing %v, launches %+v", r.Existing, r.Launches)
	}
}

// A pod being moved off its node (consolidation, drift) fits only where its volume can
// follow: a node with room in another zone is no room for it.
func TestAVolumesPodDoesNotFitElsewhereOutsideItsZone(t *testing.T) {
	f := newStorageFixture()
	f.boundClaim("data", corev1.LabelTopologyZone, "zone-a")
	pod := podOf("db-0", "1", "1Gi", mounting("data"))
	r := solveWithStorage(t, f, Input{Pods: []*corev1.Pod{pod}, Nodes: []Node{{Node: nodeOf("node-b", "4", "16Gi", "zone-b")}}})
	if len(r.Unschedulable) != 1 || len(r.Existing) != 0 {
		t.Fatalf("want the pod unschedulable, got %+v", r)
	}
}

// An unbound claim of a WaitForFirstConsumer class goes where the class's allowed
// topologies allow; a generic ephemeral volume by its template's class alike.
func TestAWaitForFirstConsumerClassAllowsItsZones(t *testing.T) {
	f := newStorageFixture()
	f.class("zonal", storagev1.VolumeBindingWaitForFirstConsumer, "zone-c")
	f.unboundClaim("data", "zonal")
	claimed := podOf("claimed", "1", "1Gi", mounting("data"))
	scratch := podOf("scratch", "1", "1Gi", ephemeralOf("zonal"))
	in := Input{
		Pods:  []*corev1.Pod{claimed, scratch},
		Nodes: []Node{{Node: nodeOf("node-a", "8", "32Gi", "zone-a")}},
		Pools: []Pool{poolOf("p", smallCatalog())},
	}
	r := solveWithStorage(t, f, in)
	if len(r.Existing) != 0 {
		t.Fatalf("pods went on node-a in zone-a; their class allows zone-c only: %v", r.Existing)
	}
	for _, l := range r.Launches {
		if !slices.Equal(l.Zones, []string{"zone-c"}) {
			t.Fatalf("want launches pinned to zone-c, got %+v", r.Launches)
		}
	}
	if placed := len(r.Launches); placed == 0 {
		t.Fatal("nothing launched")
	}
}

// A pod whose claim is missing, or not bound and of a class that binds at once, waits
// without a launch, saying why.
func TestClaimsThatCannotBindYetMakeThePodWait(t *testing.T) {
	f := newStorageFixture()
	f.class("immediate", storagev1.VolumeBindingImmediate)
	f.unboundClaim("pending", "immediate")
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"an Immediate claim not bound yet", podOf("a", "1", "1Gi", mounting("pending")), "binds at once"},
		{"a missing claim", podOf("b", "1", "1Gi", mounting("missing")), "does not exist"},
		{"an ephemeral volume of an Immediate class", podOf("c", "1", "1Gi", ephemeralOf("immediate")), "binds at once"},
		{"a claim of a class that does not exist", podOf("d", "1", "1Gi", ephemeralOf("gone")), "StorageClass gone does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Pods: []*corev1.Pod{tc.pod}, Nodes: []Node{{Node: nodeOf("node-a", "8", "32Gi", "zone-a")}}, Pools: []Pool{poolOf("p", smallCatalog())}}
			r := solveWithStorage(t, f, in)
			if len(r.Launches) != 0 || len(r.Existing) != 0 || len(r.Unschedulable) != 1 {
				t.Fatalf("want the pod waiting with no launch, got %+v", r)
			}
			if u := r.Unschedulable[0]; !strings.Contains(u.Volumes, tc.want) || len(u.Reasons) != 0 {
				t.Fatalf("want the volumes' reason to say %q, got %+v", tc.want, u)
			}
		})
	}
}

// A node takes no more volumes of a driver than its CSINode allows; a volume already
// attached there (a claim another pod uses) takes no more room.
func TestAttachLimitsOfExistingNodes(t *testing.T) {
	f := newStorageFixture()
	f.class("zonal", storagev1.VolumeBindingWaitForFirstConsumer)
	for i := range 3 {
		f.unboundClaim(fmt.Sprintf("c%d", i), "zonal")
	}
	f.boundClaim("shared", corev1.LabelTopologyZone, "zone-a")
	f.csiNode("node-a", 2)
	running := []*corev1.Pod{podOf("r0", "100m", "10Mi", mounting("c0")), podOf("r1", "100m", "10Mi", mounting("shared"))}
	another := podOf("new", "100m", "10Mi", mounting("c2"))
	sharing := podOf("sharing", "100m", "10Mi", mounting("shared"))
	in := Input{
		Pods:  []*corev1.Pod{another, sharing},
		Nodes: []Node{{Node: nodeOf("node-a", "8", "32Gi", "zone-a"), Pods: running}},
		Pools: []Pool{poolOf("p", smallCatalog())},
	}
	r := solveWithStorage(t, f, in)
	if r.Existing[sharing] != "node-a" {
		t.Fatalf("the pod sharing an attached volume should fit on node-a, got %v", r.Existing)
	}
	if _, ok := r.Existing[another]; ok {
		t.Fatalf("node-a allows 2 volumes and has 2; a third went there")
	}
	if len(r.Launches) != 1 {
		t.Fatalf("want a launch for the pod with a third volume, got %+v", r.Launches)
	}
}

// A new claim holds no more volumes than its types attach: 30 pods of one volume each
// need two nodes of a type that attaches 26, and a type that attaches fewer is dropped
// once its claim holds more.
func TestAttachLimitsOfNewClaims(t *testing.T) {
	f := newStorageFixture()
	f.class("zonal", storagev1.VolumeBindingWaitForFirstConsumer)
	var ps []*corev1.Pod
	for i := range 30 {
		name := fmt.Sprintf("c%d", i)
		f.unboundClaim(name, "zonal")
		ps = append(ps, podOf(fmt.Sprintf("p%d", i), "100m", "100Mi", mounting(name)))
	}
	types := withAttachLimit(smallCatalog(), 26)
	types[0].AttachLimits[volumes.EBSDriver] = 4 // the cheapest attaches only 4
	r := solveWithStorage(t, f, Input{Pods: ps, Pools: []Pool{poolOf("p", types)}})
	if len(r.Unschedulable) != 0 {
		t.Fatalf("unschedulable: %+v", r.Unschedulable)
	}
	if len(r.Launches) < 2 {
		t.Fatalf("30 volumes on types that attach at most 26 need 2 nodes, got %d launches", len(r.Launches))
	}
	for _, l := range r.Launches {
		if len(l.Pods) > 4 && slices.Contains(l.InstanceTypes, types[0].Name) {
			t.Fatalf("a launch of %d volumes may become %s, which attaches 4", len(l.Pods), types[0].Name)
		}
	}
}

// A claim coming takes no more volumes than its node will attach.
func TestAttachLimitsOfClaimsInFlight(t *testing.T) {
	f := newStorageFixture()
	f.class("zonal", storagev1.VolumeBindingWaitForFirstConsumer)
	f.unboundClaim("c0", "zonal")
	f.unboundClaim("c1", "zonal")
	claim := claimOf("coming", "8", "32Gi", "zone-a", false, 0)
	claim.AttachLimits = map[string]int64{volumes.EBSDriver: 1}
	first, second := podOf("first", "100m", "10Mi", mounting("c0")), podOf("second", "100m", "10Mi", mounting("c1"))
	r := solveWithStorage(t, f, Input{Pods: []*corev1.Pod{first, second}, Claims: []Claim{claim}, Pools: []Pool{poolOf("p", smallCatalog())}})
	if len(r.InFlight) != 1 || len(r.Launches) != 1 {
		t.Fatalf("want one pod on the claim (it attaches 1 volume) and one launch, got in flight %v, launches %+v", r.InFlight, r.Launches)
	}
}

// The verifier catches a simulation that ignores volumes: the same input solved without
// what the volumes ask puts the pod in the wrong zone, over an attach limit and past a
// claim that cannot bind, and the verifier, reading the objects itself, says so.
func TestTheVerifierCatchesASimulationThatIgnoresVolumes(t *testing.T) {
	f := newStorageFixture()
	f.boundClaim("data", volumes.EBSZoneLabel, "zone-a")
	f.class("immediate", storagev1.VolumeBindingImmediate)
	f.unboundClaim("pending", "immediate")
	f.class("zonal", storagev1.VolumeBindingWaitForFirstConsumer)
	f.unboundClaim("extra", "zonal")
	f.csiNode("node-b", 1)
	in := Input{
		Pods:  []*corev1.Pod{podOf("zoned", "1", "1Gi", mounting("data")), podOf("waiting", "1", "1Gi", mounting("pending")), podOf("over", "1", "1Gi", mounting("extra"))},
		Nodes: []Node{{Node: nodeOf("node-b", "8", "32Gi", "zone-b"), Pods: []*corev1.Pod{podOf("attached", "100m", "10Mi", ephemeralOf("zonal"))}}},
	}
	f.fill(t, &in)
	blind := in
	blind.Volumes = nil
	for i := range blind.Nodes {
		blind.Nodes[i].AttachLimits = nil
	}
	r := Solve(blind)
	if len(r.Existing) != 3 {
		t.Fatalf("the blind simulation should put all three pods on node-b, got %v", r.Existing)
	}
	rules := map[verifier.Rule]bool{}
	c, _ := verifierCase(in, r, 0)
	c.Storage = f.verifierStorage()
	for _, v := range verifier.Check(c) {
		rules[v.Rule] = true
	}
	if !rules[verifier.RuleVolumeBinding] || !rules[verifier.RuleVolumeLimits] {
		t.Fatalf("want VolumeBinding and NodeVolumeLimits violations, got %v", rules)
	}
}
