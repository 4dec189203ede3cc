package scheduling

import (
	"fmt"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// mixOptions chooses what a generated input holds.
type mixOptions struct {
	pods     int  // pending pods
	topology bool // false: no topology spread and no pod (anti-)affinity on any pod (node selectors stay)
	cluster  bool // true: existing nodes with pods, claims in flight, standby claims, DaemonSets
	// labels: some pods select on the instance labels (generation, vCPUs, category,
	// family), and the dedicated pools keep minValues floors on the instance family.
	labels bool
	// volumes: some pods have volumes (mixVolumes); fuzzInput adds them.
	volumes bool
}

// mixStream is the PCG stream of every generated input; the seed alone picks the input.
const mixStream = 0x6d6978 // "mix"

// mixKindAnnotation names, on each pending pod, the kind it was generated as, so that
// tests can say which kinds a result leaves unschedulable.
const mixKindAnnotation = "mix.stratos.sh/kind"

// Kinds of pending pods. A workload (a Deployment, say) has one kind and 1 to ~40 replicas
// with one template.
const (
	mixPlain        = "plain"
	mixZoneSpread   = "zone-spread"   // zone spread, a third with a hostname spread too
	mixHostSpread   = "host-spread"   // hostname spread
	mixNear         = "host-affinity" // required hostname affinity to a big group
	mixColocated    = "host-self"     // required hostname affinity to its own small group
	mixHostAnti     = "host-anti"     // required hostname anti-affinity
	mixZoneAnti     = "zone-anti"     // required zonal anti-affinity to its own group of 2-3
	mixZoneAffinity = "zone-affinity" // required zonal affinity
	mixPreferred    = "preferred"     // preferred pod (anti-)affinity and ScheduleAnyway spread
)

// mixShares are the percentages of pending pods of each kind when o.topology; plain pods
// are generated first and take the rest (about 50%), zone-anti groups a handful.
var mixShares = []struct {
	kind    string
	percent int
}{
	{mixZoneSpread, 16}, {mixHostSpread, 8}, {mixNear, 5}, {mixColocated, 2},
	{mixHostAnti, 2}, {mixZoneAffinity, 6}, {mixPreferred, 10},
}

// The small shared value set every label and selector draws from, so that the groups of
// different workloads overlap and a selector often does not match its own pods.
var (
	mixApps  = []string{"a", "b", "c", "d", "e", "f"}
	mixTiers = []string{"web", "api", "batch"}
)

// mixInput generates an Input from seed; the same seed and options give the same input
// (pods in the same order, same names).
func mixInput(seed uint64, o mixOptions) Input {
	rng := rand.New(rand.NewPCG(seed, mixStream))
	g := &mixGen{rng: rng, o: o}
	catalog := mixCatalog(rng)
	g.pools = mixPools(catalog, o.pods)
	if o.labels {
		mixFloors(g.pools)
	}
	in := Input{Pools: g.pools}
	in.Pods = g.pendingPods()
	if o.cluster {
		in.DaemonSets = mixDaemonSets()
		g.cluster(&in)
	}
	mixLimits(&in)
	return in
}

type mixGen struct {
	rng   *rand.Rand
	o     mixOptions
	pools []Pool
	// anchors are plain templates of 250m or more: affinity pods target their labels, so
	// that a matching pod exists (see anchorTerm).
	anchors []*corev1.Pod
	bound   int // pods generated bound to nodes and claims, for their names
	// nodes caches, per pool, its types and the nodes of their offerings (poolNodes).
	nodes [][]mixTypeNodes
}

func (g *mixGen) pick(values []string) string { return values[g.rng.IntN(len(values))] }

// chance is true with probability percent/100.
func (g *mixGen) chance(percent int) bool { return g.rng.IntN(100) < percent }

// pendingPods makes o.pods pending pods as workloads of each kind, then shuffles them
// (the simulation must not depend on their order).
func (g *mixGen) pendingPods() []*corev1.Pod {
	budget := map[string]int{}
	plain := g.o.pods
	if g.o.topology {
		for _, s := range mixShares {
			budget[s.kind] = g.o.pods * s.percent / 100
			plain -= budget[s.kind]
		}
		budget[mixZoneAnti] = min(8, g.o.pods/400) * 3
		plain -= budget[mixZoneAnti]
	}
	var out []*corev1.Pod
	add := func(kind string, n int) {
		for n > 0 {
			tmpl := g.template(kind)
			replicas := g.replicas(tmpl, n)
			for r := range replicas {
				pod := tmpl.DeepCopy()
				pod.Name = fmt.Sprintf("%s-%d-%d", kind, len(out), r)
				out = append(out, pod)
			}
			n -= replicas
		}
	}
	add(mixPlain, plain) // first: the anchors of the affinity kinds
	for _, s := range mixShares {
		add(s.kind, budget[s.kind])
	}
	add(mixZoneAnti, budget[mixZoneAnti])
	g.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// replicas draws a workload's size, small more often than large, at most left.
func (g *mixGen) replicas(tmpl *corev1.Pod, left int) int {
	var n int
	switch kind := tmpl.Annotations[mixKindAnnotation]; {
	case kind == mixColocated || kind == mixZoneAnti:
		n = 2 + g.rng.IntN(2) // a group on one node, or one per zone
	case kind == mixHostAnti || len(hostPorts(tmpl)) > 0:
		n = 1 + g.rng.IntN(4) // a node each
	default:
		n = 1 + g.rng.IntN(1+g.rng.IntN(40))
	}
	return min(n, left)
}

// template makes the pod every replica of a new workload copies.
func (g *mixGen) template(kind string) *corev1.Pod {
	if !g.o.topology {
		kind = mixPlain
	}
	pod := g.basePod()
	tiny := kind == mixNear || kind == mixColocated
	cpu, memoryHungry := g.setRequests(pod, tiny)
	g.setTolerations(pod, memoryHungry)
	switch kind {
	case mixPlain:
		if g.chance(3) {
			pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		}
		g.setNodeSelector(pod)
		if cpu >= 250 {
			g.anchors = append(g.anchors, pod)
		}
	case mixZoneSpread, mixHostSpread, mixHostAnti, mixPreferred:
		g.setNodeSelector(pod)
	}
	// Affinity kinds have no node selector: their domain is where their targets are.
	if !g.setTopology(pod, kind) {
		kind = mixPlain
	}
	pod.Annotations = map[string]string{mixKindAnnotation: kind}
	return pod
}

// basePod is a pod with labels from the shared set, in default or (a fifth) team-b.
func (g *mixGen) basePod() *corev1.Pod {
	ns := "default"
	if g.chance(20) {
		ns = "team-b"
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: map[string]string{
			"app": g.pick(mixApps), "tier": g.pick(mixTiers), "pod-template-hash": fmt.Sprintf("%08x", g.rng.Uint32()),
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
	}
}

// mixCPUs are the CPU requests drawn, in millicores, with weights summing to 100.
var mixCPUs = []struct{ milli, weight int64 }{
	{50, 10}, {100, 15}, {250, 20}, {500, 20}, {750, 8}, {1000, 12}, {1500, 5}, {2000, 6}, {4000, 4},
}

// cpu draws a CPU request from mixCPUs.
func (g *mixGen) cpu() int64 {
	w := g.rng.Int64N(100)
	for _, c := range mixCPUs {
		if w < c.weight {
			return c.milli
		}
		w -= c.weight
	}
	panic("the weights of mixCPUs must sum to 100")
}

// mixRatios are GiB of memory per CPU for the compute, general and memory profiles, so
// that each family is the cheapest for some pods.
var mixRatios = [][]float64{{0.5, 1}, {2, 3, 4}, {6, 8}}

// setRequests draws CPU, then memory by the ratio of a profile (30% compute, 50% general,
// 20% memory); a few pods ask for ephemeral storage, have a sidecar or a bigger init
// container. Tiny pods (affinity followers) ask for 50-100m and at most 256Mi, so that
// they are placed after their targets. It returns the CPU and whether the pod is
// memory-hungry.
func (g *mixGen) setRequests(pod *corev1.Pod, tiny bool) (int64, bool) {
	cpu, memory := 50+50*g.rng.Int64N(2), 64*mixMi<<g.rng.IntN(3)
	profile := 1
	if !tiny {
		cpu = g.cpu()
		profile = []int{0, 0, 0, 1, 1, 1, 1, 1, 2, 2}[g.rng.IntN(10)]
		ratios := mixRatios[profile]
		gib := ratios[g.rng.IntN(len(ratios))]
		memory = int64(float64(cpu)/1000*gib*float64(mixGi)) / (64 * mixMi) * (64 * mixMi)
		memory = min(max(memory, 64*mixMi), 16*mixGi)
	}
	c := &pod.Spec.Containers[0]
	c.Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
	}
	if g.chance(6) {
		c.Resources.Requests[corev1.ResourceEphemeralStorage] = *resource.NewQuantity((1+g.rng.Int64N(2))*mixGi, resource.BinarySI)
	}
	if g.chance(25) {
		pod.Spec.Containers = append(pod.Spec.Containers, mixContainer("proxy", "50m", "64Mi"))
	}
	if g.chance(5) {
		pod.Spec.InitContainers = []corev1.Container{mixContainer("init", "500m", "256Mi")}
	}
	return cpu, profile == 2
}

func mixContainer(name, cpu, memory string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}}
}

// setTolerations: most memory-hungry pods tolerate the highmem pool, most batch-tier pods
// the batch pool, and a few pods tolerate every taint.
func (g *mixGen) setTolerations(pod *corev1.Pod, memoryHungry bool) {
	if memoryHungry && g.chance(80) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: mixHighmemTaint.Key, Operator: corev1.TolerationOpExists, Effect: mixHighmemTaint.Effect})
	}
	if pod.Labels["tier"] == "batch" && g.chance(70) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: mixBatchTaint.Key, Operator: corev1.TolerationOpEqual, Value: mixBatchTaint.Value, Effect: mixBatchTaint.Effect})
	}
	if g.chance(2) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	}
}

// setNodeSelector: pods that tolerate the batch pool often select it or spot capacity
// (which only the limited general pool offers besides); about 15% of the others select an
// architecture, on-demand capacity or zones. A choice no unlimited pool the pod tolerates
// can meet is dropped, so that every pod stays placeable whatever the limits leave.
func (g *mixGen) setNodeSelector(pod *corev1.Pod) {
	sel := map[string]string{}
	var zones []string
	switch {
	case tolerates(pod.Spec.Tolerations, []corev1.Taint{mixBatchTaint.Core()}) && g.chance(50):
		if g.chance(60) {
			sel[mixBatchTaint.Key] = mixBatchTaint.Value
		} else {
			sel[v1beta1.LabelCapacityType] = v1beta1.CapacityTypeSpot
		}
		if g.chance(30) {
			sel[corev1.LabelArchStable] = g.pick([]string{"amd64", "arm64"})
		}
	case g.chance(15):
		switch g.rng.IntN(6) {
		case 0, 1:
			sel[corev1.LabelArchStable] = g.pick([]string{"amd64", "arm64"})
		case 2:
			sel[v1beta1.LabelCapacityType] = v1beta1.CapacityTypeOnDemand
		case 3:
			sel[corev1.LabelTopologyZone] = g.pick(mixZones)
		case 4:
			perm := g.rng.Perm(len(mixZones))
			zones = []string{mixZones[min(perm[0], perm[1])], mixZones[max(perm[0], perm[1])]}
		case 5:
			sel[corev1.LabelArchStable] = g.pick([]string{"amd64", "arm64"})
			sel[corev1.LabelTopologyZone] = g.pick(mixZones)
		}
	}
	var required []corev1.NodeSelectorRequirement
	if zones != nil {
		required = append(required, corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: zones})
	}
	if g.o.labels && g.chance(15) {
		required = g.selectInstanceLabels(sel, required)
	}
	if len(sel) > 0 {
		pod.Spec.NodeSelector = sel
	}
	if required != nil {
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: required}},
		}}}
	}
	if !g.placeable(pod) {
		pod.Spec.NodeSelector, pod.Spec.Affinity = nil, nil
	}
}

// placeable reports whether a pool without limits that the pod tolerates has an
// available offering its node selector and affinity accept, of a type that holds it with
// room for any DaemonSets, among types that meet the pool's minValues floors.
func (g *mixGen) placeable(pod *corev1.Pod) bool {
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	need := podRequests(pod)
	need.add(&resources{cpu: 300, memory: 448 * mixMi, pods: 3}) // the three DaemonSets at most
	for i, p := range g.pools {
		if p.NodesLeft >= 0 || len(p.Left) > 0 || !tolerates(pod.Spec.Tolerations, mixTaints(p)) {
			continue
		}
		var fitting []map[string]string // the labels of each type that can take the pod
		for _, t := range g.poolNodes(i) {
			if !need.fits(&t.allocatable) {
				continue
			}
			for _, node := range t.nodes {
				if ok, err := affinity.Match(node); err == nil && ok {
					fitting = append(fitting, node.Labels)
					break
				}
			}
		}
		if len(fitting) > 0 && mixMeetsFloors(p, fitting) {
			return true
		}
	}
	return false
}

// mixTypeNodes is an instance type of a pool with the nodes of its available offerings.
type mixTypeNodes struct {
	allocatable resources
	nodes       []*corev1.Node
}

// poolNodes returns, made once per input, the types of pool i with their nodes.
func (g *mixGen) poolNodes(i int) []mixTypeNodes {
	if g.nodes == nil {
		g.nodes = make([][]mixTypeNodes, len(g.pools))
	}
	if g.nodes[i] == nil {
		p := g.pools[i]
		for _, it := range p.InstanceTypes {
			t := mixTypeNodes{allocatable: fromList(it.Allocatable())}
			for _, o := range it.Offerings {
				if o.Available {
					t.nodes = append(t.nodes, mixNode("", p, it, o))
				}
			}
			g.nodes[i] = append(g.nodes[i], t)
		}
	}
	return g.nodes[i]
}

// mixOptionSets are the four combinations of topology and cluster, at n pods, and two
// of them with instance labels and floors.
func mixOptionSets(n int) []mixOptions {
	var out []mixOptions
	for _, topology := range []bool{false, true} {
		for _, cluster := range []bool{false, true} {
			out = append(out, mixOptions{pods: n, topology: topology, cluster: cluster})
		}
	}
	return append(out, mixOptions{pods: n, labels: true}, mixOptions{pods: n, topology: true, cluster: true, labels: true})
}
