package fake

import (
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// NodeViews returns the kubelets' view of every instance the cloud knows, by instance
// ID, and the clock time it holds for.
func (c *Cloud) NodeViews() (time.Time, []NodeView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	views := make([]NodeView, 0, len(c.instances))
	for _, inst := range c.instances {
		views = append(views, inst.nodeView(now, c.region))
	}
	sort.Slice(views, func(a, b int) bool { return views[a].InstanceID < views[b].InstanceID })
	return now, views
}

func (i *instance) nodeView(now time.Time, region string) NodeView {
	offering := cloudprovider.Offering{Zone: i.Zone, CapacityType: i.CapacityType}
	v := NodeView{
		InstanceID:   i.ID,
		NodeName:     i.hostname,
		ProviderID:   i.ProviderID,
		PrivateIP:    i.privateIP,
		InstanceType: i.instanceType.WithKubelet(i.kubelet),
		Labels:       maps.Clone(i.labels),
		Boot:         i.boot.Number,
		Resumes:      i.boot.Resumes,
	}
	// The kubelet's own labels win over requested ones, as the kubelet's do.
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	maps.Copy(v.Labels, offeringLabels(region, i.instanceType, offering))
	v.Labels[corev1.LabelHostname] = i.hostname
	for _, t := range i.taints {
		v.Taints = append(v.Taints, *t.DeepCopy())
	}
	if !i.neverRegister {
		v.Phase, v.Since = i.boot.Phase(now)
	}
	if sick, ok := i.sickNow(); ok && (v.Phase == NodeReady || v.Phase == NodeNotReady) {
		how := sick.how
		v.Unhealthy, v.UnhealthySince = &how, sick.since
	}
	v.Images = i.images.Present(now)
	return v
}

// PullImages asks the kubelet of the instance behind the Node nodeName for the images a
// pod needs (see Machines).
func (c *Cloud) PullImages(nodeName string, boot int, from time.Time, images []string) ([]ImagePull, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	inst := c.byHostname(nodeName)
	if inst == nil || inst.neverRegister || inst.State != cloudprovider.StateRunning {
		return nil, false
	}
	from, ok := inst.boot.PullsFrom(boot, from, now)
	if !ok {
		return nil, false
	}
	pulls, queued := inst.images.Request(now, from, images)
	if queued {
		c.notify()
	}
	return pulls, true
}

// byHostname returns the instance whose Node is nodeName, nil if none. The caller holds
// the lock.
func (c *Cloud) byHostname(nodeName string) *instance {
	for _, inst := range c.instances {
		if inst.hostname == nodeName {
			return inst
		}
	}
	return nil
}
