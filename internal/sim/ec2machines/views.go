package ec2machines

import (
	"fmt"
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// Clock is the clock the kubelets' timelines are on.
func (m *Machines) Clock() clock.WithTicker { return m.opts.Clock }

// Changes signals that a poll found instances changed.
func (m *Machines) Changes() <-chan struct{} { return m.changes }

// NodeViews returns what the kubelet of every instance reports now, by instance ID.
func (m *Machines) NodeViews() (time.Time, []physics.NodeView) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Clock.Now()
	views := make([]physics.NodeView, 0, len(m.machines))
	for _, mc := range m.machines {
		views = append(views, m.view(mc, now))
	}
	sort.Slice(views, func(a, b int) bool { return views[a].InstanceID < views[b].InstanceID })
	return now, views
}

// view is what the kubelet of one instance reports at now. The caller holds the lock.
func (m *Machines) view(mc *machine, now time.Time) physics.NodeView {
	v := physics.NodeView{
		InstanceID:   mc.id,
		NodeName:     mc.nodeName,
		ProviderID:   mc.providerID,
		PrivateIP:    mc.privateIP,
		InstanceType: mc.shape,
		Labels:       maps.Clone(mc.registration.Labels),
		Boot:         mc.boot.Number,
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	// The labels a kubelet sets itself, with those the cloud provider adds on EKS.
	maps.Copy(v.Labels, map[string]string{
		corev1.LabelHostname:           mc.nodeName,
		corev1.LabelOSStable:           "linux",
		corev1.LabelArchStable:         mc.arch,
		corev1.LabelInstanceTypeStable: mc.shapeName(),
		corev1.LabelTopologyZone:       mc.zone,
		corev1.LabelTopologyRegion:     m.opts.Region,
	})
	for _, t := range mc.registration.Taints {
		v.Taints = append(v.Taints, *t.DeepCopy())
	}
	if !mc.broken {
		v.Phase, v.Since = mc.boot.Phase(now)
	}
	v.Images = mc.images.Present(now)
	return v
}

func (mc *machine) shapeName() string {
	if mc.shape == nil {
		return ""
	}
	return mc.shape.Name
}

// NextEvent returns the earliest change of what a kubelet reports after the given time.
func (m *Machines) NextEvent(after time.Time) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next time.Time
	for _, mc := range m.machines {
		if mc.broken {
			continue
		}
		for _, kubelet := range []func(time.Time) (time.Time, bool){mc.boot.NextEvent, mc.images.NextEvent} {
			if t, ok := kubelet(after); ok && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next, !next.IsZero()
}

// PodHost returns what the pods bound to the Node nodeName see of its instance.
func (m *Machines) PodHost(nodeName, podKey string) (time.Time, physics.PodHost, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Clock.Now()
	mc, ok := m.machines[m.byNode[nodeName]]
	if !ok || mc.broken {
		return now, physics.PodHost{}, false
	}
	v := m.view(mc, now)
	return now, physics.PodHost{
		InstanceID: mc.id,
		PrivateIP:  mc.privateIP,
		Boot:       v.Boot,
		Running:    mc.running,
		Ready:      mc.running && v.Phase == physics.NodeReady,
		ReadyAt:    v.Since,
		StartDelay: m.opts.Physics.PodStartDelay(mc.id, v.Boot, podKey, m.opts.TimeScale),
	}, true
}

// PullImages asks the kubelet of the instance behind the Node nodeName for the images a
// pod needs (see kubelet.Machines).
func (m *Machines) PullImages(nodeName string, boot int, from time.Time, images []string) ([]physics.ImagePull, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Clock.Now()
	mc, ok := m.machines[m.byNode[nodeName]]
	if !ok || mc.broken || !mc.running {
		return nil, false
	}
	from, ok = mc.boot.PullsFrom(boot, from, now)
	if !ok {
		return nil, false
	}
	pulls, queued := mc.images.Request(now, from, images)
	if queued {
		m.notify()
	}
	return pulls, true
}

// Instances returns the cluster's instances as the last poll described them, terminated
// ones included, for the invariants.
func (m *Machines) Instances() []cloudprovider.Instance {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]cloudprovider.Instance, len(m.instances))
	for n, inst := range m.instances {
		out[n] = inst
		out[n].Tags = maps.Clone(inst.Tags)
	}
	return out
}

// Calls returns the EC2 calls the kubelets made, by action: the simulator's, not the
// operator's.
func (m *Machines) Calls() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.calls)
}

// Problems returns what was wrong with the instances as launched: user data a kubelet
// cannot start with, a type EC2 does not describe, no DNS name to name a Node by.
func (m *Machines) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

func (m *Machines) count(action string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[action]++
}

func (m *Machines) problem(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
}
