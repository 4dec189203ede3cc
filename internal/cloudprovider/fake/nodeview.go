package fake

import (
	"maps"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// nodePhase is what the kubelet of an instance reports during the current boot.
type nodePhase int

const (
	// phaseAbsent: the kubelet has not registered yet during this boot, or never will.
	phaseAbsent nodePhase = iota
	// phaseNotReady: registered, waiting for the network.
	phaseNotReady
	phaseReady
	// phaseShuttingDown: a stop or termination began after the kubelet registered.
	phaseShuttingDown
	// phaseFrozen: a hibernation froze the kubelet, which reports nothing until it thaws.
	phaseFrozen
)

func (p nodePhase) String() string {
	return [...]string{"Absent", "NotReady", "Ready", "ShuttingDown", "Frozen"}[p]
}

// nodeView is what the kubelet of one instance reports at some time. It holds copies,
// so the kubelet simulator uses it without the cloud's lock.
type nodeView struct {
	instanceID   string
	nodeName     string
	providerID   string
	privateIP    string
	instanceType *cloudprovider.InstanceType
	// labels and taints are those the kubelet registers the Node with.
	labels map[string]string
	taints []corev1.Taint

	boot int
	// resumes counts the resumes from hibernation in this boot: the kubelet reports
	// afresh after each.
	resumes int
	phase   nodePhase
	// since is when the phase began.
	since time.Time
	// images are the images pulled so far, in pull order.
	images []string
}

// nodeViews returns the kubelets' view of every instance the cloud knows, by instance
// ID, and the clock time it holds for.
func (c *Cloud) nodeViews() (time.Time, []nodeView) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.advance(now)
	views := make([]nodeView, 0, len(c.instances))
	for _, inst := range c.instances {
		views = append(views, inst.nodeView(now, c.region))
	}
	sort.Slice(views, func(a, b int) bool { return views[a].instanceID < views[b].instanceID })
	return now, views
}

func (i *instance) nodeView(now time.Time, region string) nodeView {
	offering := cloudprovider.Offering{Zone: i.Zone, CapacityType: i.CapacityType}
	v := nodeView{
		instanceID:   i.ID,
		nodeName:     i.hostname,
		providerID:   i.ProviderID,
		privateIP:    i.privateIP,
		instanceType: i.instanceType,
		labels:       maps.Clone(i.labels),
		boot:         i.boot.number,
		resumes:      i.boot.resumes,
	}
	// The kubelet's own labels win over requested ones, as the kubelet's do.
	if v.labels == nil {
		v.labels = map[string]string{}
	}
	maps.Copy(v.labels, offeringLabels(region, i.instanceType, offering))
	v.labels[corev1.LabelHostname] = i.hostname
	for _, t := range i.taints {
		v.taints = append(v.taints, *t.DeepCopy())
	}

	b := i.boot
	// happened reports whether a kubelet event of this boot took place by now: events
	// after the shutdown began never do.
	happened := func(t time.Time) bool {
		return !t.After(now) && (b.shutdownAt.IsZero() || t.Before(b.shutdownAt))
	}
	switch {
	case i.neverRegister:
		v.phase = phaseAbsent
	case b.frozen(now):
		v.phase = phaseFrozen
	case !happened(b.registerAt):
		v.phase = phaseAbsent
	case !b.shutdownAt.IsZero():
		v.phase, v.since = phaseShuttingDown, b.shutdownAt
	case happened(b.readyAt):
		v.phase, v.since = phaseReady, b.reportsFrom()
	default:
		v.phase, v.since = phaseNotReady, b.registerAt
	}
	for n, at := range i.pulledAt {
		if !at.IsZero() && !at.After(now) {
			v.images = append(v.images, i.images[n])
		}
	}
	return v
}
