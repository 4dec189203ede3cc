package scheduling

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// labelledType is an instance type named family.size, with the instance labels the
// clouds give it.
func labelledType(family, size string, cpus int64, price float64) *cloudprovider.InstanceType {
	memory := resource.NewQuantity(cpus*4<<30, resource.BinarySI)
	t := instanceTypeOf(family+"."+size, resource.NewQuantity(cpus, resource.DecimalSI).String(), memory.String(), price)
	t.Attributes = cloudprovider.InstanceFacts{Name: t.Name, VCPUs: cpus, MemoryMiB: cpus * 4 << 10, Hypervisor: "nitro"}.Attributes()
	return t
}

// labelledCatalog: generation 5 is cheaper than 6; each family in 2, 4 and 8 vCPUs.
func labelledCatalog() []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, f := range []struct {
		name  string
		price float64 // of the 2-vCPU size
	}{{"c5", 0.08}, {"m5", 0.09}, {"c6", 0.10}, {"m6", 0.11}} {
		for i, size := range []string{"large", "xlarge", "2xlarge"} {
			out = append(out, labelledType(f.name, size, 2<<i, f.price*float64(int(1)<<i)))
		}
	}
	return out
}

func requiring(key string, op corev1.NodeSelectorOperator, values ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}},
		}}}
	}
}

// withFloor gives a pool a minValues requirement on key (an Exists, which the types
// meet already).
func withFloor(p Pool, key string, minValues int32) Pool {
	p.Pool = p.Pool.DeepCopy()
	p.Pool.Spec.Template.Spec.Requirements = append(p.Pool.Spec.Template.Spec.Requirements,
		v1beta1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists, MinValues: ptr.To(minValues)})
	return p
}

func familiesOf(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		family, _, _ := strings.Cut(n, ".")
		out[family] = true
	}
	return out
}

// Pods select on the instance labels with node selectors and Gt/Lt node affinity; the
// simulation places them on new claims, in-flight claims and standby claims whose labels
// match, and nowhere else.
func TestPodsSelectOnInstanceLabels(t *testing.T) {
	cases := []struct {
		name string
		pod  func(*corev1.Pod)
		want string // the launch's first type
	}{
		{"no selector: the cheapest that holds it", nil, "c5.large"},
		{"more than 4 vCPUs", requiring(v1beta1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "4"), "c5.2xlarge"},
		{"fewer than 4 vCPUs", requiring(v1beta1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "4"), "c5.large"},
		{"generation 6", selecting(v1beta1.LabelInstanceGeneration, "6"), "c6.large"},
		{"a generation above 5", requiring(v1beta1.LabelInstanceGeneration, corev1.NodeSelectorOpGt, "5"), "c6.large"},
		{"the m category", selecting(v1beta1.LabelInstanceCategory, "m"), "m5.large"},
		{"at least 16 GiB", requiring(v1beta1.LabelInstanceMemory, corev1.NodeSelectorOpGt, "16383"), "c5.xlarge"},
		{"size xlarge of family m6", func(p *corev1.Pod) {
			selecting(v1beta1.LabelInstanceSize, "xlarge")(p)
			selecting(v1beta1.LabelInstanceFamily, "m6")(p)
		}, "m6.xlarge"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []func(*corev1.Pod)
			if tc.pod != nil {
				opts = append(opts, tc.pod)
			}
			r := solve(t, Input{Pods: pods(1, "p", "500m", "1Gi", opts...), Pools: []Pool{poolOf("p", labelledCatalog())}})
			if len(r.Launches) != 1 || r.Launches[0].InstanceTypes[0] != tc.want {
				t.Fatalf("launches %+v, want one of %s", r.Launches, tc.want)
			}
		})
	}

	t.Run("on claims by their labels", func(t *testing.T) {
		big := claimOf("big", "8", "32Gi", "zone-a", false, 0.4)
		small := claimOf("small", "2", "8Gi", "zone-a", true, 0.1)
		for c, it := range map[*Claim]*cloudprovider.InstanceType{&big: labelledType("c5", "2xlarge", 8, 0.32), &small: labelledType("c5", "large", 2, 0.08)} {
			for k, v := range it.Attributes {
				c.Labels[k] = v
			}
		}
		in := Input{
			Pods: append(pods(1, "wide", "1", "1Gi", requiring(v1beta1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "4")),
				pods(1, "narrow", "1", "1Gi", requiring(v1beta1.LabelInstanceCPU, corev1.NodeSelectorOpLt, "4"))...),
			Claims: []Claim{small, big},
			Pools:  []Pool{poolOf("p", labelledCatalog())},
		}
		r := solve(t, in)
		if r.InFlight[in.Pods[0]] != "big" || len(r.Starts) != 1 || r.Starts[0].Claim != "small" || r.Starts[0].Pods[0] != in.Pods[1] || len(r.Launches) != 0 {
			t.Fatalf("want the wide pod on the big claim in flight and the narrow one starting the small standby claim: %+v", r)
		}
	})
}

// A pool's minValues floor: every launch lists types of at least that many families,
// pods that would narrow a claim below it go to another claim, and a pod that alone
// would is left unschedulable with the floor as the reason.
func TestMinValuesFloor(t *testing.T) {
	t.Run("launches keep the floor", func(t *testing.T) {
		pool := withFloor(poolOf("p", labelledCatalog()), v1beta1.LabelInstanceFamily, 3)
		r := solve(t, Input{Pods: pods(6, "p", "1", "2Gi"), Pools: []Pool{pool}})
		if len(r.Launches) == 0 || len(r.Unschedulable) > 0 {
			t.Fatalf("%+v", r)
		}
		for _, l := range r.Launches {
			if families := familiesOf(l.InstanceTypes); len(families) < 3 {
				t.Errorf("launch of types %v spans %d families, want at least 3", l.InstanceTypes, len(families))
			}
		}
	})

	t.Run("packing stops where the floor would break", func(t *testing.T) {
		// Family c5 goes up to 8 vCPUs, m5 only to 4: a claim of more than 4 vCPUs of
		// pods would leave one family, so the pods take several claims of 4 vCPUs.
		types := []*cloudprovider.InstanceType{
			labelledType("c5", "large", 2, 0.08), labelledType("c5", "xlarge", 4, 0.16), labelledType("c5", "2xlarge", 8, 0.32),
			labelledType("m5", "large", 2, 0.09), labelledType("m5", "xlarge", 4, 0.18),
		}
		without := solve(t, Input{Pods: pods(6, "p", "1", "1Gi"), Pools: []Pool{poolOf("p", types)}})
		r := solve(t, Input{Pods: pods(6, "p", "1", "1Gi"), Pools: []Pool{withFloor(poolOf("p", types), v1beta1.LabelInstanceFamily, 2)}})
		if len(without.Launches) != 1 || without.Launches[0].InstanceTypes[0] != "c5.2xlarge" {
			t.Fatalf("without a floor: %+v, want one c5.2xlarge", without.Launches)
		}
		if len(r.Launches) != 2 {
			t.Fatalf("with the floor: %d launches %+v, want 2", len(r.Launches), r.Launches)
		}
		for _, l := range r.Launches {
			if families := familiesOf(l.InstanceTypes); len(l.Pods) > 4 || len(families) < 2 {
				t.Errorf("launch of %d pods lists %v", len(l.Pods), l.InstanceTypes)
			}
		}
	})

	t.Run("a pod that would break it alone waits, and says why", func(t *testing.T) {
		pool := withFloor(poolOf("p", labelledCatalog()), v1beta1.LabelInstanceFamily, 2)
		in := Input{Pods: append(pods(1, "one-family", "1", "1Gi", selecting(v1beta1.LabelInstanceFamily, "m6")),
			pods(1, "two-families", "1", "1Gi", requiring(v1beta1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "m5", "m6"))...), Pools: []Pool{pool}}
		r := solve(t, in)
		if len(r.Unschedulable) != 1 || r.Unschedulable[0].Pod != in.Pods[0] {
			t.Fatalf("unschedulable %+v, want the pod that selects one family", r.Unschedulable)
		}
		if why := r.Unschedulable[0].Reasons["p"]; !strings.Contains(why, "1 distinct values of stratos.sh/instance-family") || !strings.Contains(why, "at least 2 (minValues)") {
			t.Errorf("reason %q", why)
		}
		if len(r.Launches) != 1 || !slices.Equal(r.Launches[0].InstanceTypes, []string{"m5.large", "m6.large", "m5.xlarge", "m6.xlarge", "m5.2xlarge", "m6.2xlarge"}) {
			t.Errorf("the two-family pod's launch: %+v", r.Launches)
		}
	})

	t.Run("the floor keeps types past the launch's usual ten", func(t *testing.T) {
		var types []*cloudprovider.InstanceType
		for i := range 12 {
			types = append(types, labelledType("c5", string(rune('a'+i))+"large", 2, 0.08+float64(i)*0.001))
		}
		types = append(types, labelledType("m5", "large", 2, 0.5))
		r := solve(t, Input{Pods: pods(1, "p", "1", "1Gi"), Pools: []Pool{withFloor(poolOf("p", types), v1beta1.LabelInstanceFamily, 2)}})
		if len(r.Launches) != 1 {
			t.Fatalf("%+v", r)
		}
		got := r.Launches[0].InstanceTypes
		if len(got) != maxLaunchTypes+1 || got[0] != "c5.alarge" || got[len(got)-1] != "m5.large" {
			t.Errorf("launch lists %v: want the ten cheapest and m5.large", got)
		}
	})

	t.Run("limits hold the types the floor keeps", func(t *testing.T) {
		// The floor needs m5.xlarge (4 vCPUs) beside c5.large; a limit of 3 vCPUs
		// leaves room for c5.large only.
		types := []*cloudprovider.InstanceType{labelledType("c5", "large", 2, 0.08), labelledType("m5", "xlarge", 4, 0.18)}
		pool := withLimits(withFloor(poolOf("p", types), v1beta1.LabelInstanceFamily, 2), -1, ptr.To[int64](3000), nil)
		r := solve(t, Input{Pods: pods(1, "p", "1", "1Gi"), Pools: []Pool{pool}})
		if len(r.Launches) != 0 || len(r.Unschedulable) != 1 {
			t.Fatalf("want nothing launched under the limit: %+v", r)
		}
		pool.Left[corev1.ResourceCPU] = 4000
		r = solve(t, Input{Pods: pods(1, "p", "1", "1Gi"), Pools: []Pool{pool}})
		if len(r.Launches) != 1 || !slices.Equal(r.Launches[0].InstanceTypes, []string{"c5.large", "m5.xlarge"}) {
			t.Fatalf("with room for m5.xlarge: %+v", r.Launches)
		}
	})
}

// The test harness catches a launch that lists too few values for its pool's floor, and
// a launched type that does not meet the pool's requirements.
func TestVerifyCatchesBrokenFloorsAndRequirements(t *testing.T) {
	pool := withFloor(poolOf("p", labelledCatalog()), v1beta1.LabelInstanceFamily, 2)
	in := Input{Pods: pods(1, "p", "1", "1Gi"), Pools: []Pool{pool}}
	r := solve(t, in)
	if len(r.Launches) != 1 {
		t.Fatalf("%+v", r)
	}
	cut := r
	cut.Launches = []Launch{r.Launches[0]}
	cut.Launches[0].InstanceTypes = r.Launches[0].InstanceTypes[:1]
	if found := violations(t, in, cut); len(found) == 0 || !strings.Contains(found[0], "1 values of stratos.sh/instance-family") {
		t.Errorf("a launch cut to one family: found %v", found)
	}

	gen6 := poolOf("p", labelledCatalog())
	gen6.Pool = gen6.Pool.DeepCopy()
	gen6.Pool.Spec.Template.Spec.Requirements = []v1beta1.NodeSelectorRequirement{{Key: v1beta1.LabelInstanceGeneration, Operator: corev1.NodeSelectorOpGt, Values: []string{"5"}}}
	in = Input{Pods: in.Pods, Pools: []Pool{gen6}}
	if found := violations(t, in, r); len(found) == 0 || !strings.Contains(found[0], "does not meet pool p's requirements") {
		t.Errorf("a generation-5 launch of a generation-6 pool: found %v", found)
	}
}

// A pod that names the zone or the capacity type is matched offering by offering; one
// that names neither, type by type: both give the offerings a node of which it accepts.
func TestAllowedOfferingsByTypeAndByOffering(t *testing.T) {
	types := labelledCatalog()
	types[0].Offerings = append(types[0].Offerings, cloudprovider.Offering{Zone: "zone-a", CapacityType: v1beta1.CapacityTypeSpot, PricePerHour: 0.03, Available: true})
	for _, opt := range []func(*corev1.Pod){
		selecting(v1beta1.LabelInstanceFamily, "c5"),
		requiring(v1beta1.LabelInstanceCPU, corev1.NodeSelectorOpGt, "2"),
		selecting(v1beta1.LabelCapacityType, v1beta1.CapacityTypeSpot),
		requiring(corev1.LabelTopologyZone, corev1.NodeSelectorOpNotIn, "zone-b"),
	} {
		pod := podOf("p", "1", "1Gi", opt)
		s := newSolver(Input{Pods: []*corev1.Pod{pod}, Pools: []Pool{poolOf("p", types)}})
		ps, p := s.pools[0], s.pods[0]
		allowed := ps.allowedFor(p)
		for i, o := range ps.offerings {
			// The node, labelled as the cloud labels it.
			it := types[slices.IndexFunc(types, func(t *cloudprovider.InstanceType) bool { return t.Name == ps.types[o.typ].name })]
			labels := it.Labels(cloudprovider.Offering{Zone: s.topo.zones[o.zone], CapacityType: o.ct})
			labels[v1beta1.LabelNodePool] = "p"
			want, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}})
			if err != nil || allowed.has(i) != want {
				t.Errorf("%v: offering %d (%s %s %s) allowed %v, want %v (%v)", pod.Spec, i, it.Name, s.topo.zones[o.zone], o.ct, allowed.has(i), want, err)
			}
		}
	}
}

// A pod's zone spread counts a new claim's pods only if the claim will be a node its
// node affinity accepts. A claim that could be either is settled to one side; when
// neither side keeps its pool's floor, it stays as it is, and the spread holds whichever
// way it goes.
func TestSpreadOverAClaimThatCannotSettleKeepsTheFloor(t *testing.T) {
	types := []*cloudprovider.InstanceType{labelledType("x5", "large", 2, 0.08), labelledType("y5", "large", 2, 0.09), labelledType("z5", "large", 2, 0.10)}
	floored := withFloor(poolOf("floored", types), v1beta1.LabelInstanceFamily, 3)
	floored.Pool.Spec.Weight = 10
	web := func(p *corev1.Pod) {
		labelled("app", "web")(p)
		spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")(p)
	}
	in := Input{
		Pods:  append(pods(1, "any", "1", "1Gi", web), pods(1, "x5-only", "500m", "1Gi", web, selecting(v1beta1.LabelInstanceFamily, "x5"))...),
		Pools: []Pool{floored, poolOf("free", types)},
	}
	r := solve(t, in)
	if len(r.Launches) != 2 || len(r.Unschedulable) > 0 {
		t.Fatalf("want a launch in each pool: %+v", r)
	}
	byPool := map[string]Launch{}
	for _, l := range r.Launches {
		byPool[l.Pool] = l
	}
	if families := familiesOf(byPool["floored"].InstanceTypes); len(families) != 3 {
		t.Errorf("the floored claim lists %v", byPool["floored"].InstanceTypes)
	}
	if slices.Equal(byPool["floored"].Zones, byPool["free"].Zones) {
		t.Errorf("both pods in %v: the spread would break if the floored claim became an x5", byPool["free"].Zones)
	}
}
