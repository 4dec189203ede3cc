package scheduling

import (
	"fmt"
	"math"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The catalog of mixInput looks like EC2's: three families by memory per vCPU, each in
// several generations and variants on amd64 and arm64, from 1 to 192 vCPU (390 types).
// What matters to the simulation is that the families trade CPU for memory, that small
// types hold few pods, that arm64 and spot are cheaper, and that some offerings are
// missing, so that the cheapest choice varies from pod to pod.

const (
	mixMi = int64(1) << 20
	mixGi = int64(1) << 30
)

type mixFamily struct {
	letter    string
	gibPerCPU int64
	perCPU    float64 // on-demand dollars per vCPU-hour, as c5, m5 and r5 cost
}

var mixFamilies = []mixFamily{{"c", 2, 0.0425}, {"m", 4, 0.048}, {"r", 8, 0.063}}

// mixVariant is a generation and variant, with its price relative to the family's.
type mixVariant struct {
	suffix string
	arch   string
	gen    int
	factor float64
}

var mixVariants = []mixVariant{
	{"5", "amd64", 5, 1.00}, {"5a", "amd64", 5, 0.91}, {"5n", "amd64", 5, 1.15},
	{"6i", "amd64", 6, 1.00}, {"6a", "amd64", 6, 0.90}, {"6id", "amd64", 6, 1.12}, {"6in", "amd64", 6, 1.18},
	{"7i", "amd64", 7, 1.05}, {"7a", "amd64", 7, 1.13}, {"8i", "amd64", 8, 1.10},
	// Graviton costs about 20% less per vCPU.
	{"6g", "arm64", 6, 0.80}, {"6gd", "arm64", 6, 0.88}, {"7g", "arm64", 7, 0.85}, {"8g", "arm64", 8, 0.90},
}

var mixSizes = []struct {
	name string
	cpu  int64
}{
	{"medium", 1}, {"large", 2}, {"xlarge", 4}, {"2xlarge", 8}, {"4xlarge", 16},
	{"8xlarge", 32}, {"12xlarge", 48}, {"16xlarge", 64}, {"24xlarge", 96}, {"48xlarge", 192},
}

// zone-d is a newer zone: only generations 7 and 8 are offered there, and only by the
// on-demand catch-all pool, which every pod can use.
var mixZones = []string{"zone-a", "zone-b", "zone-c", "zone-d"}

// mixType is a catalog entry with what the pools choose types by.
type mixType struct {
	*cloudprovider.InstanceType
	family  string
	variant mixVariant
	cpu     int64
}

func mixCatalog(rng *rand.Rand) []mixType {
	var out []mixType
	for _, f := range mixFamilies {
		for _, v := range mixVariants {
			for _, s := range mixSizes {
				if s.cpu == 1 && v.arch != "arm64" {
					continue // medium is Graviton only
				}
				pods := mixMaxPods(s.cpu)
				it := &cloudprovider.InstanceType{
					Name:         fmt.Sprintf("%s%s.%s", f.letter, v.suffix, s.name),
					Architecture: v.arch,
					Capacity: corev1.ResourceList{
						corev1.ResourceCPU:              *resource.NewQuantity(s.cpu, resource.DecimalSI),
						corev1.ResourceMemory:           *resource.NewQuantity(s.cpu*f.gibPerCPU*mixGi, resource.BinarySI),
						corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
						corev1.ResourceEphemeralStorage: *resource.NewQuantity(20*mixGi, resource.BinarySI),
					},
					Overhead: mixOverhead(s.cpu, pods),
				}
				it.Attributes = cloudprovider.InstanceFacts{
					Name: it.Name, VCPUs: s.cpu, MemoryMiB: s.cpu * f.gibPerCPU << 10, Hypervisor: "nitro",
					NetworkBandwidthMbps: min(375*s.cpu, 100000),
				}.Attributes()
				onDemand := float64(s.cpu) * f.perCPU * v.factor
				zones := mixZones[:3]
				if v.gen >= 7 {
					zones = mixZones
				}
				for _, z := range zones {
					for _, ct := range []string{v1beta1.CapacityTypeOnDemand, v1beta1.CapacityTypeSpot} {
						price := onDemand
						if ct == v1beta1.CapacityTypeSpot {
							price *= 0.3 + 0.3*rng.Float64()
						}
						it.Offerings = append(it.Offerings, cloudprovider.Offering{
							Zone: z, CapacityType: ct, PricePerHour: math.Round(price*1e4) / 1e4, Available: rng.IntN(10) > 0,
						})
					}
				}
				out = append(out, mixType{InstanceType: it, family: f.letter, variant: v, cpu: s.cpu})
			}
		}
	}
	return out
}

// mixMaxPods follows EC2's ENI limits, capped at the kubelet's default of 110.
func mixMaxPods(cpu int64) int64 {
	switch {
	case cpu == 1:
		return 8
	case cpu == 2:
		return 29
	case cpu <= 8:
		return 58
	default:
		return 110
	}
}

// mixOverhead is EKS's kube-reserved (CPU by cores, memory by pods) with an eviction
// threshold, so that a type's allocatable is well below its capacity.
func mixOverhead(cpu, pods int64) cloudprovider.Overhead {
	milli := int64(60)
	if cpu >= 2 {
		milli += 10
	}
	milli += 5*min(2, max(0, cpu-2)) + 5*max(0, cpu-4)/2
	return cloudprovider.Overhead{
		KubeReserved: corev1.ResourceList{
			corev1.ResourceCPU:              *resource.NewMilliQuantity(milli, resource.DecimalSI),
			corev1.ResourceMemory:           *resource.NewQuantity((255+11*pods)*mixMi, resource.BinarySI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(1*mixGi, resource.BinarySI),
		},
		EvictionThreshold: corev1.ResourceList{
			corev1.ResourceMemory:           *resource.NewQuantity(100*mixMi, resource.BinarySI),
			corev1.ResourceEphemeralStorage: *resource.NewQuantity(1*mixGi, resource.BinarySI),
		},
	}
}

// Taints of the dedicated pools.
var (
	mixHighmemTaint = v1beta1.Taint{Key: "example.com/memory-optimized", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	mixBatchTaint   = v1beta1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}
)

// mixPools makes four pools, by weight:
//   - highmem (70): 75 r types of generations 6-8, spot and on-demand, zones a-c,
//     tainted so that only memory-hungry pods that tolerate it use it, with a memory
//     limit (256Mi a pending pod) that overflows them elsewhere;
//   - general (50): 72 c and m types of generations 6-7 from 2 to 48 vCPU, spot and
//     on-demand, zones a-c, with node (2 + pods/120) and CPU (250m a pending pod)
//     limits that bind, so that overflow goes to lower weights;
//   - batch (20): 96 c and m types up to 96 vCPU, spot only, zones a-c, tainted and
//     labelled dedicated=batch, without limits;
//   - default (0): all 390 types on demand in the four zones, without limits: it can
//     take any pod that tolerates no taint, so the input stays feasible at any size.
//
// Instance-type requirements list at most 100 types, as the API allows.
func mixPools(types []mixType, pods int) []Pool {
	gen6 := func(t mixType) bool { return t.variant.gen >= 6 && len(t.variant.suffix) == 2 } // 6i, 6a, 7g... not d or n
	abc := v1beta1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: mixZones[:3]}
	capacityType := func(ct string) v1beta1.NodeSelectorRequirement {
		return v1beta1.NodeSelectorRequirement{Key: v1beta1.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{ct}}
	}
	highmem := mixPool(types, "highmem", 70, func(t mixType) bool { return t.family == "r" && gen6(t) }, abc)
	highmem.Pool.Spec.Template.Labels = map[string]v1beta1.LabelValue{"example.com/class": "highmem"}
	highmem.Pool.Spec.Template.Spec.Taints = []v1beta1.Taint{mixHighmemTaint}
	highmem.Left = map[corev1.ResourceName]int64{corev1.ResourceMemory: int64(pods) * 256 * mixMi}

	general := mixPool(types, "general", 50, func(t mixType) bool {
		return t.family != "r" && gen6(t) && t.variant.gen < 8 && t.cpu >= 2 && t.cpu <= 48
	}, abc)
	general.NodesLeft = 2 + pods/120
	general.Left = map[corev1.ResourceName]int64{corev1.ResourceCPU: int64(pods) * 250}

	batch := mixPool(types, "batch", 20, func(t mixType) bool {
		return t.family != "r" && gen6(t) && t.variant.gen < 8 && t.cpu >= 2 && t.cpu <= 96
	}, abc, capacityType(v1beta1.CapacityTypeSpot))
	batch.Pool.Spec.Template.Labels = map[string]v1beta1.LabelValue{mixBatchTaint.Key: v1beta1.LabelValue(mixBatchTaint.Value)}
	batch.Pool.Spec.Template.Spec.Taints = []v1beta1.Taint{mixBatchTaint}

	catchAll := mixPool(types, "default", 0, nil, capacityType(v1beta1.CapacityTypeOnDemand))
	return []Pool{highmem, general, batch, catchAll}
}

// mixPool makes a pool of the types keep accepts (nil: all) within requirements, and
// narrows its instance types to the offerings they allow, as the simulation's caller does.
// The types are kept by keep itself: matching them against the list of names is slow.
func mixPool(types []mixType, name string, weight int32, keep func(mixType) bool, requirements ...v1beta1.NodeSelectorRequirement) Pool {
	core := v1beta1.CoreRequirements(requirements)
	if keep != nil {
		names := v1beta1.NodeSelectorRequirement{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn}
		for _, t := range types {
			if keep(t) {
				names.Values = append(names.Values, t.Name)
			}
		}
		requirements = append(requirements, names)
	}
	pool := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.NodePoolSpec{Weight: weight, Template: v1beta1.NodeClaimTemplate{
			Spec: v1beta1.NodeClaimTemplateSpec{
				Requirements: requirements,
				NodeClassRef: v1beta1.NodeClassReference{Group: v1beta1.Group, Kind: "EC2NodeClass", Name: "default"},
			},
		}},
	}
	p := Pool{Pool: pool, NodesLeft: -1}
	for _, t := range types {
		if keep != nil && !keep(t) {
			continue
		}
		narrowed := *t.InstanceType
		narrowed.Offerings = nil
		for _, o := range t.Offerings {
			if ok, err := cloudprovider.Satisfies(t.InstanceType, o, core); err == nil && ok {
				narrowed.Offerings = append(narrowed.Offerings, o)
			}
		}
		if len(narrowed.Offerings) > 0 {
			p.InstanceTypes = append(p.InstanceTypes, &narrowed)
		}
	}
	return p
}

// mixLimits writes each pool's limits as what is left plus what the cluster's nodes and
// claims of the pool hold, as the caller of the simulation computes what is left.
func mixLimits(in *Input) {
	for i := range in.Pools {
		p := &in.Pools[i]
		var nodes int32
		var used resources
		count := func(pool string, capacity corev1.ResourceList) {
			if pool == p.Pool.Name {
				nodes++
				r := fromList(capacity)
				used.add(&r)
			}
		}
		for _, n := range in.Nodes {
			count(n.Node.Labels[v1beta1.LabelNodePool], n.Node.Status.Capacity)
		}
		for _, c := range in.Claims {
			count(c.Labels[v1beta1.LabelNodePool], c.Claim.Status.Capacity)
		}
		limits := v1beta1.Limits{}
		if p.NodesLeft >= 0 {
			limits[v1beta1.LimitNodes] = *resource.NewQuantity(int64(p.NodesLeft)+int64(nodes), resource.DecimalSI)
		}
		for name, left := range p.Left {
			if name == corev1.ResourceCPU {
				limits[name] = *resource.NewMilliQuantity(left+used.get(name), resource.DecimalSI)
			} else {
				limits[name] = *resource.NewQuantity(left+used.get(name), resource.BinarySI)
			}
		}
		if len(limits) > 0 {
			p.Pool.Spec.Limits = limits
		}
	}
}

// mixDaemonSets: kube-proxy runs everywhere, an agent on arm64 nodes only (not on
// tainted ones), and a log shipper on every node but the memory-optimised ones.
func mixDaemonSets() []*corev1.Pod {
	ds := func(name, cpu, memory string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: "kube-system", Labels: map[string]string{"app.kubernetes.io/name": name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, Controller: ptr.To(true)}},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
			}}}}},
		}
	}
	proxy := ds("kube-proxy", "100m", "128Mi")
	proxy.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	arm := ds("arm-agent", "50m", "64Mi")
	arm.Spec.NodeSelector = map[string]string{corev1.LabelArchStable: "arm64"}
	logs := ds("log-shipper", "150m", "256Mi")
	logs.Spec.Tolerations = []corev1.Toleration{{Key: mixBatchTaint.Key, Operator: corev1.TolerationOpEqual, Value: mixBatchTaint.Value, Effect: mixBatchTaint.Effect}}
	return []*corev1.Pod{proxy, arm, logs}
}

// mixTaints are the taints of a pool's nodes.
func mixTaints(p Pool) []corev1.Taint {
	var taints []corev1.Taint
	for _, t := range p.Pool.Spec.Template.Spec.Taints {
		taints = append(taints, t.Core())
	}
	return taints
}

// mixNode is a node of pool p bought as offering o of type it, labelled as Stratos and
// the cloud label it; name "" leaves the hostname out.
func mixNode(name string, p Pool, it *cloudprovider.InstanceType, o cloudprovider.Offering) *corev1.Node {
	labels := it.Labels(o)
	for k, v := range p.Pool.Spec.Template.Labels {
		labels[k] = string(v)
	}
	labels[v1beta1.LabelNodePool] = p.Pool.Name
	if name != "" {
		labels[corev1.LabelHostname] = name
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: mixTaints(p)},
		Status:     corev1.NodeStatus{Capacity: it.Capacity, Allocatable: it.Allocatable()},
	}
}
