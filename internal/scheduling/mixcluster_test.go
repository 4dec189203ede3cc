package scheduling

// The cluster mixInput adds when asked: nodes running pods, claims, DaemonSet pods.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// cluster adds what runs already: nodes (one per 25 pending pods) 30-85% full, claims in
// flight and standby claims (one per 50 pending pods each), with the DaemonSet pods that
// run there. The pods on them carry the shared labels, so they count in the pending pods'
// spread and affinity; with topology, one node in eight runs a pod that repels tier=batch
// from its node (symmetric anti-affinity).
func (g *mixGen) cluster(in *Input) {
	nodeWeights := []int{15, 45, 10, 30} // highmem, general, batch, default: mixPools' order
	for i := range max(1, g.o.pods/25) {
		p, it, o := g.machine(nodeWeights)
		node := mixNode(fmt.Sprintf("node-%d", i), p, it, o)
		pods := g.daemonPods(in.DaemonSets, node)
		pods = append(pods, g.fill(node, pods, 30+g.rng.IntN(56), 200, true, g.o.topology && g.chance(12))...)
		in.Nodes = append(in.Nodes, Node{Node: node, Pods: pods})
	}
	inFlight := []v1beta1.NodeClaimPhase{v1beta1.PhaseLaunching, v1beta1.PhaseRegistering, v1beta1.PhaseInitializing}
	for i := range max(1, g.o.pods/50) {
		c, node := g.claim(fmt.Sprintf("inflight-%d", i), nodeWeights, inFlight[g.rng.IntN(len(inFlight))], in.DaemonSets)
		c.Pods = append(c.Pods, g.fill(node, c.Pods, 25, g.rng.IntN(4), false, false)...) // nominated
		in.Claims = append(in.Claims, c)
	}
	// Standby ranks as the caller gives them: warming up 0, stopped 1, still launching 2.
	standby := []v1beta1.NodeClaimPhase{v1beta1.PhaseWarmingUp, v1beta1.PhaseStandby, v1beta1.PhaseLaunching}
	for i := range max(1, g.o.pods/50) {
		rank := g.rng.IntN(len(standby))
		c, _ := g.claim(fmt.Sprintf("standby-%d", i), []int{20, 50, 0, 30}, standby[rank], in.DaemonSets)
		c.Standby, c.Rank = true, rank
		c.Claim.Spec.DesiredState = v1beta1.DesiredStandby
		in.Claims = append(in.Claims, c)
	}
}

// machine picks a pool by weight, one of its types of 2 to 64 vCPU with an available
// offering, and one of those offerings.
func (g *mixGen) machine(weights []int) (Pool, *cloudprovider.InstanceType, cloudprovider.Offering) {
	w, i := g.rng.IntN(mixSum(weights)), 0
	for ; w >= weights[i]; i++ {
		w -= weights[i]
	}
	p := g.pools[i]
	var types []*cloudprovider.InstanceType
	for _, it := range p.InstanceTypes {
		cpu := it.Capacity.Cpu().Value()
		if _, ok := it.Cheapest(nil); ok && cpu >= 2 && cpu <= 64 {
			types = append(types, it)
		}
	}
	it := types[g.rng.IntN(len(types))]
	var offers []cloudprovider.Offering
	for _, o := range it.Offerings {
		if o.Available {
			offers = append(offers, o)
		}
	}
	return p, it, offers[g.rng.IntN(len(offers))]
}

func mixSum(values []int) int {
	sum := 0
	for _, v := range values {
		sum += v
	}
	return sum
}

// claim makes a claim of a pool picked by weight, in phase; once its Node exists
// (registered), the DaemonSet pods run there. It returns the Node it has or will have.
func (g *mixGen) claim(name string, weights []int, phase v1beta1.NodeClaimPhase, daemonSets []*corev1.Pod) (Claim, *corev1.Node) {
	p, it, o := g.machine(weights)
	node := mixNode(name, p, it, o)
	nc := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1beta1.LabelNodePool: p.Pool.Name}},
		Spec: v1beta1.NodeClaimSpec{
			NodePool: p.Pool.Name, NodeClassRef: p.Pool.Spec.Template.Spec.NodeClassRef, Taints: p.Pool.Spec.Template.Spec.Taints,
			DesiredState: v1beta1.DesiredRunning,
		},
		Status: v1beta1.NodeClaimStatus{
			Phase: phase, InstanceType: it.Name, Zone: o.Zone, CapacityType: o.CapacityType,
			Capacity: it.Capacity, Allocatable: it.Allocatable(),
		},
	}
	c := Claim{Claim: nc, Labels: node.Labels, Taints: node.Spec.Taints, Allocatable: it.Allocatable(), PricePerHour: o.PricePerHour}
	if phase != v1beta1.PhaseLaunching && phase != v1beta1.PhaseRegistering {
		c.Pods = g.daemonPods(daemonSets, node)
	}
	return c, node
}

// daemonPods are the pods the DaemonSets run on node.
func (g *mixGen) daemonPods(daemonSets []*corev1.Pod, node *corev1.Node) []*corev1.Pod {
	var out []*corev1.Pod
	for _, ds := range daemonSets {
		if ok, err := nodeaffinity.GetRequiredNodeAffinity(ds).Match(node); err != nil || !ok || !tolerates(ds.Spec.Tolerations, node.Spec.Taints) {
			continue
		}
		pod := ds.DeepCopy()
		pod.Name = ds.Name + "-" + node.Name
		pod.Spec.NodeName = node.Name
		pod.Status.Phase = corev1.PodRunning
		out = append(out, pod)
	}
	return out
}

// fill makes pods, bound to node or nominated to it, until they take percent of the CPU
// the pods there leave, or maxPods of them. With guard, the first repels tier=batch
// from the node, and no pod there is tier=batch.
func (g *mixGen) fill(node *corev1.Node, there []*corev1.Pod, percent, maxPods int, bind, guard bool) []*corev1.Pod {
	free := fromList(node.Status.Allocatable)
	for _, pod := range there {
		r := podRequests(pod)
		free.sub(&r)
	}
	target := free.cpu * int64(percent) / 100
	var used resources
	var out []*corev1.Pod
	for tries := 0; tries < 50 && used.cpu < target && len(out) < maxPods; tries++ {
		pod := g.basePod()
		if guard && pod.Labels["tier"] == "batch" {
			pod.Labels["tier"] = g.pick(mixTiers[:2])
		}
		g.setRequests(pod, false)
		r := podRequests(pod)
		if sum := used.plus(&r); !sum.fits(&free) {
			continue
		} else {
			used = sum
		}
		for _, t := range node.Spec.Taints {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
		}
		g.bound++
		if bind {
			pod.Name, pod.Spec.NodeName, pod.Status.Phase = fmt.Sprintf("running-%d", g.bound), node.Name, corev1.PodRunning
		} else {
			pod.Name, pod.Status.NominatedNodeName, pod.Status.Phase = fmt.Sprintf("nominated-%d", g.bound), node.Name, corev1.PodPending
		}
		if guard && len(out) == 0 {
			pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey: corev1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "batch"}},
			}}}}
		}
		out = append(out, pod)
	}
	return out
}
