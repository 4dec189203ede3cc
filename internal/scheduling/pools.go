package scheduling

import (
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// offering is one way to buy a new node of a pool: an instance type in a zone with a
// capacity type.
type offering struct {
	typ      int
	zone     int
	zoneName string
	ct       string
	price    float64
	// node carries the labels such a node would have; made on first use
	// (poolState.offeringNode) but for the type's first offering.
	node *corev1.Node
}

// instanceType is a pool's instance type with what is left of it for pods.
type instanceType struct {
	name string
	// allocatable is what pods get once the DaemonSets that would run there take theirs.
	allocatable resources
	// capacity is the machine's, which the pool's limits count.
	capacity resources
	// attachLimits is how many volumes each CSI driver may attach to such a node.
	attachLimits map[string]int64
	// first and last bound the type's offerings, which are contiguous.
	first, last int
}

// poolState is a pool during a simulation: its offerings and what its limits leave.
type poolState struct {
	name      string
	offerings []offering
	types     []instanceType
	taints    []corev1.Taint
	zoneMask  []bitset // per zone index: the offerings in that zone
	all       bitset
	// allowed caches, by pod affinity key, the offerings whose labels the pod accepts;
	// placeable, by pod affinity and volume selectors keys, those its volumes allow too.
	allowed, placeable map[string]bitset
	// tolerated caches, by pod tolerations key, whether the template's taints are tolerated.
	tolerated map[string]bool
	// rates caches, by pod affinity key, the lowest prices per millicore, per byte and
	// per pod slot among the offerings the pod accepts (ceiling.go).
	rates map[string][3]float64
	// floors are the template's minValues requirements (floors.go).
	floors    []floor
	nodesLeft int // negative: unlimited
	// left is the capacity the limits leave by resource, in the units of resources; a
	// resource absent is unlimited. A copy: the simulation spends it. limited lists its
	// resources in name order, so that explanations name the same one each time.
	left    map[corev1.ResourceName]int64
	limited []corev1.ResourceName
}

// newPoolState lays out a pool's offerings, cheapest type first, sizes each type as the
// template's kubelet configuration makes its nodes, and takes the DaemonSets that would
// run on them off each type's allocatable.
func newPoolState(p Pool, t *topology, daemonSets []*corev1.Pod) *poolState {
	tmpl := p.Pool.Spec.Template.Spec
	ps := &poolState{
		name:      p.Pool.Name,
		allowed:   map[string]bitset{},
		placeable: map[string]bitset{},
		tolerated: map[string]bool{},
		rates:     map[string][3]float64{},
		nodesLeft: p.NodesLeft,
		left:      maps.Clone(p.Left),
		limited:   slices.Sorted(maps.Keys(p.Left)),
	}
	for _, taint := range tmpl.Taints {
		ps.taints = append(ps.taints, taint.Core())
	}
	types := append([]*cloudprovider.InstanceType(nil), p.InstanceTypes...)
	sort.SliceStable(types, func(a, b int) bool { return cheapestPrice(types[a]) < cheapestPrice(types[b]) })
	for _, it := range types {
		shaped := it.WithKubelet(tmpl.Kubelet)
		if !shaped.LeavesRoomForPods() {
			continue // the template's kubelet keeps all of its CPU or memory back
		}
		ti := instanceType{name: it.Name, allocatable: fromList(shaped.Allocatable()), capacity: fromList(shaped.Capacity), attachLimits: it.AttachLimits, first: len(ps.offerings)}
		for _, o := range it.Offerings {
			if !o.Available || o.Zone == "" {
				continue // nothing to buy, or nowhere to place a node bought
			}
			var node *corev1.Node
			if len(ps.offerings) == ti.first {
				labels := it.Labels(o)
				for k, v := range p.Pool.Spec.Template.Labels {
					labels[k] = string(v)
				}
				labels[v1beta1.LabelNodePool] = ps.name
				node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.NodeSpec{Taints: ps.taints}}
			}
			ps.offerings = append(ps.offerings, offering{typ: len(ps.types), zone: t.zone(o.Zone), zoneName: o.Zone, ct: o.CapacityType, price: o.PricePerHour, node: node})
		}
		ti.last = len(ps.offerings)
		if ti.last == ti.first {
			continue // nothing available to buy
		}
		// DaemonSets that would run on this type's nodes take their share first.
		overhead := daemonSetOverhead(daemonSets, ps.offerings[ti.first].node)
		ti.allocatable.sub(&overhead)
		ps.types = append(ps.types, ti)
	}
	ps.floors = newFloors(p, ps)
	ps.all = newBitset(len(ps.offerings))
	for i := range ps.offerings {
		ps.all.set(i)
	}
	return ps
}

// offeringNode returns the node offering i would be. The nodes of a type's offerings
// differ only in the zone and the capacity type (offeringLabels; the template may set
// neither), so each is its type's first with those two changed, made when first asked.
func (ps *poolState) offeringNode(i int) *corev1.Node {
	o := &ps.offerings[i]
	if o.node == nil {
		first := ps.offerings[ps.types[o.typ].first].node
		labels := maps.Clone(first.Labels)
		labels[corev1.LabelTopologyZone], labels[v1beta1.LabelCapacityType] = o.zoneName, o.ct
		o.node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: first.Spec}
	}
	return o.node
}

// finishZones builds the per-zone offering masks once every zone is registered.
func (ps *poolState) finishZones(zones int) {
	ps.zoneMask = make([]bitset, zones)
	for z := range ps.zoneMask {
		ps.zoneMask[z] = newBitset(len(ps.offerings))
	}
	for i, o := range ps.offerings {
		if o.zone >= 0 {
			ps.zoneMask[o.zone].set(i)
		}
	}
}

func cheapestPrice(t *cloudprovider.InstanceType) float64 {
	if o, ok := t.Cheapest(nil); ok {
		return o.PricePerHour
	}
	return 1e18
}

// daemonSetOverhead adds up the requests of the DaemonSet pods that would run on node.
func daemonSetOverhead(daemonSets []*corev1.Pod, node *corev1.Node) resources {
	var overhead resources
	for _, ds := range daemonSets {
		p := &podInfo{pod: ds}
		if a := ds.Spec.Affinity; len(ds.Spec.NodeSelector) > 0 || (a != nil && a.NodeAffinity != nil) {
			p.affinityKey = "ds"
			p.affinity = nodeaffinity.GetRequiredNodeAffinity(ds)
		}
		if !p.matchesNodeAffinity(node) || !tolerates(ds.Spec.Tolerations, node.Spec.Taints) {
			continue
		}
		r := podRequests(ds)
		overhead.add(&r)
	}
	return overhead
}

// tolerates reports whether tolerations tolerate every NoSchedule and NoExecute taint.
func tolerates(tolerations []corev1.Toleration, taints []corev1.Taint) bool {
	if len(taints) == 0 {
		return true
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return !untolerated
}

// allowedFor returns the offerings whose labels a pod's node selector and affinity accept.
func (ps *poolState) allowedFor(p *podInfo) bitset {
	if p.affinityKey == "" {
		return ps.all
	}
	if b, ok := ps.allowed[p.affinityKey]; ok {
		return b
	}
	b := newBitset(len(ps.offerings))
	for _, t := range ps.types {
		if !p.byOffering {
			// The offerings of a type differ only in labels the pod does not name.
			if p.matchesNodeAffinity(ps.offerings[t.first].node) {
				b.setRange(t.first, t.last)
			}
			continue
		}
		for i := t.first; i < t.last; i++ {
			if p.matchesNodeAffinity(ps.offeringNode(i)) {
				b.set(i)
			}
		}
	}
	ps.allowed[p.affinityKey] = b
	return b
}

// toleratedBy reports whether a pod tolerates the pool's template taints.
func (ps *poolState) toleratedBy(p *podInfo) bool {
	if len(ps.taints) == 0 {
		return true
	}
	ok, cached := ps.tolerated[p.tolerationsKey]
	if !cached {
		ok = tolerates(p.pod.Spec.Tolerations, ps.taints)
		ps.tolerated[p.tolerationsKey] = ok
	}
	return ok
}

// limitsAllow reports whether the pool's limits leave room for a claim to grow from the
// capacity held for it to capacity.
func (ps *poolState) limitsAllow(capacity, held *resources) bool {
	for _, name := range ps.limited {
		if capacity.get(name)-held.get(name) > ps.left[name] {
			return false
		}
	}
	return true
}

// spend takes what a claim grows by, from the capacity held for it to capacity, from
// what the limits leave.
func (ps *poolState) spend(capacity, held *resources) {
	for _, name := range ps.limited {
		ps.left[name] -= capacity.get(name) - held.get(name)
	}
}
