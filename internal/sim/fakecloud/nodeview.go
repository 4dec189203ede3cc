package fakecloud

import (
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// NodeViews returns the kubelets' view of every instance the cloud knows, by instance
// ID, and the clock time it holds for.
func (c *Cloud) NodeViews() (time.Time, []physics.NodeView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	views := make([]physics.NodeView, 0, len(c.instances))
	for _, inst := range c.instances {
		views = append(views, inst.nodeView(now, c.region))
	}
	sort.Slice(views, func(a, b int) bool { return views[a].InstanceID < views[b].InstanceID })
	return now, views
}

func (i *instance) nodeView(now time.Time, region string) physics.NodeView {
	offering := cloudprovider.Offering{Zone: i.Zone, CapacityType: i.CapacityType}
	v := physics.NodeView{
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
	if sick, ok := i.sickNow(); ok && (v.Phase == physics.NodeReady || v.Phase == physics.NodeNotReady) {
		how := sick.how
		v.Unhealthy, v.UnhealthySince = &how, sick.since
	}
	v.Images = i.images.Present(now)
	return v
}

// PullImages asks the kubelet of the instance behind the Node nodeName for the images a
// pod needs (see Machines).
func (c *Cloud) PullImages(nodeName string, boot int, from time.Time, images []string) ([]physics.ImagePull, bool) {
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

// PodHost returns the clock time and what a pod sees of the instance behind the Node
// nodeName, with the pod's container start delay in the current boot; false when the
// cloud knows no such instance.
func (c *Cloud) PodHost(nodeName, podKey string) (time.Time, physics.PodHost, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	inst := c.byHostname(nodeName)
	if inst == nil {
		return now, physics.PodHost{}, false
	}
	v := inst.nodeView(now, c.region)
	running := inst.State == cloudprovider.StateRunning
	return now, physics.PodHost{
		InstanceID: inst.ID,
		PrivateIP:  inst.privateIP,
		Boot:       v.Boot,
		Running:    running,
		Frozen:     v.Phase == physics.NodeFrozen,
		Ready:      running && v.ReportsReady(),
		ReadyAt:    v.Since,
		StartDelay: inst.physics.PodStartDelay(inst.ID, v.Boot, podKey, c.timeScale),
	}, true
}
