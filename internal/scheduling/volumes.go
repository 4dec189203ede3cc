package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/stratos-sh/stratos/internal/volumes"
)

// podVolumes is what the simulation needs of a pod's volumes (volumes.Needs), worked
// out once: kube-scheduler's VolumeBinding filter (the node must match every selector)
// and NodeVolumeLimits filter (the node must have room for every attachment).
type podVolumes struct {
	// key identifies the selectors; pods that share it match the same nodes. "" when
	// the pod's volumes select no node.
	key       string
	selectors []*nodeaffinity.LazyErrorNodeSelector
	// byOffering is true when a selector names a label that differs between the
	// offerings of one instance type (the zone or the capacity type).
	byOffering  bool
	attachments []volumes.Attachment
	// wait says why no node can take the pod now (volumes.Needs.Wait).
	wait string
}

// newPodVolumes compiles what a pod's volumes need.
func newPodVolumes(n volumes.Needs) podVolumes {
	v := podVolumes{key: n.SelectorsKey(), attachments: n.Attachments, wait: n.Wait}
	for i := range n.Selectors {
		v.selectors = append(v.selectors, nodeaffinity.NewLazyErrorNodeSelector(&n.Selectors[i]))
		v.byOffering = v.byOffering || namesOfferingLabel(nil, &n.Selectors[i])
	}
	return v
}

// matches reports whether node matches every selector of the pod's volumes.
func (v *podVolumes) matches(node *corev1.Node) bool {
	for _, s := range v.selectors {
		if ok, err := s.Match(node); err != nil || !ok {
			return false
		}
	}
	return true
}

// volumesOK reports whether a fixed bin's node matches the selectors of p's volumes and
// has room for their attachments.
func (b *bin) volumesOK(p *podInfo) bool {
	if p.volumes.key != "" {
		ok, cached := b.volumesMatch[p.volumes.key]
		if !cached {
			ok = p.volumes.matches(b.node)
			if b.volumesMatch == nil {
				b.volumesMatch = map[string]bool{}
			}
			b.volumesMatch[p.volumes.key] = ok
		}
		if !ok {
			return false
		}
	}
	for driver, count := range b.attachedWith(p) {
		if limit, ok := b.attachLimits[driver]; ok && count > limit {
			return false
		}
	}
	return true
}

// attachedWith returns, for each CSI driver p's volumes use, how many volumes it would
// attach to the bin with p there: those of the bin's pods and p's, each once.
func (b *bin) attachedWith(p *podInfo) map[string]int64 {
	if len(p.volumes.attachments) == 0 {
		return nil
	}
	counts := map[string]int64{}
	for _, a := range p.volumes.attachments {
		if _, counted := counts[a.Driver]; !counted {
			counts[a.Driver] = int64(len(b.attached[a.Driver]))
		}
	}
	seen := map[volumes.Attachment]bool{}
	for _, a := range p.volumes.attachments {
		if _, there := b.attached[a.Driver][a.ID]; !there && !seen[a] {
			seen[a] = true
			counts[a.Driver]++
		}
	}
	return counts
}

// attach records the attachments of a pod placed on the bin.
func (b *bin) attach(attachments []volumes.Attachment) {
	for _, a := range attachments {
		if b.attached == nil {
			b.attached = map[string]map[string]struct{}{}
		}
		if b.attached[a.Driver] == nil {
			b.attached[a.Driver] = map[string]struct{}{}
		}
		b.attached[a.Driver][a.ID] = struct{}{}
	}
}

// clearTypesOverAttachLimits drops from offers the offerings of the types that could not
// attach the volumes the new bin would hold with p.
func (ps *poolState) clearTypesOverAttachLimits(offers bitset, counts map[string]int64) {
	for _, t := range ps.types {
		for driver, count := range counts {
			if limit, ok := t.attachLimits[driver]; ok && count > limit {
				offers.clearRange(t.first, t.last)
				break
			}
		}
	}
}

// placeableFor returns the offerings a pod accepts and its volumes allow: its node
// selector and affinity (allowedFor), and the selectors of its volumes.
func (ps *poolState) placeableFor(p *podInfo) bitset {
	allowed := ps.allowedFor(p)
	if p.volumes.key == "" {
		return allowed
	}
	key := p.affinityKey + "\x00" + p.volumes.key
	if b, ok := ps.placeable[key]; ok {
		return b
	}
	b := allowed.clone()
	for _, t := range ps.types {
		if !p.volumes.byOffering {
			if !p.volumes.matches(ps.offerings[t.first].node) {
				b.clearRange(t.first, t.last)
			}
			continue
		}
		for i := t.first; i < t.last; i++ {
			if b.has(i) && !p.volumes.matches(ps.offeringNode(i)) {
				b.clear(i)
			}
		}
	}
	ps.placeable[key] = b
	return b
}
