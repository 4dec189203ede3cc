package provisioning

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/scheduling"
)

// recordStart counts a started standby claim as a node its pool's pending pods needed
// at the calendar time at, in the claim's zone: what the pods needed, whether a warm node or a cold launch served
// it, is what a learned warm pool sizes itself by.
func (p *Provisioner) recordStart(pool *v1beta1.NodePool, claim *v1beta1.NodeClaim, pods []*corev1.Pod, at time.Time) {
	if pool == nil || !anyReal(pods) {
		return
	}
	p.Demand.Record(pool, at, zoneOf(claim), 1)
}

// recordLaunch counts a launched claim as a node its pool's pending pods needed at the
// calendar time at, in the zone the pods tied it to, or "" when they left it to the cloud.
func (p *Provisioner) recordLaunch(pool *v1beta1.NodePool, l scheduling.Launch, at time.Time) {
	if pool == nil || !anyReal(l.Pods) {
		return
	}
	zone := ""
	if len(l.Zones) == 1 {
		zone = l.Zones[0]
	}
	p.Demand.Record(pool, at, zone, 1)
}

// anyReal reports whether a real pod is among pods: a node only a CapacityBuffer's
// virtual pods need is room kept, not demand seen.
func anyReal(pods []*corev1.Pod) bool {
	for _, pod := range pods {
		if !capacitybuffer.IsVirtual(pod) {
			return true
		}
	}
	return false
}

// zoneOf is the zone of a standby claim: where its instance is, or the zone it was made
// for.
func zoneOf(c *v1beta1.NodeClaim) string {
	if c.Status.Zone != "" {
		return c.Status.Zone
	}
	for _, r := range c.Spec.Requirements {
		if r.Key == corev1.LabelTopologyZone && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			return r.Values[0]
		}
	}
	return ""
}
