package fake

import (
	"fmt"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Unhealthy is how the kubelet of a running instance fails, for node repair to notice.
// The zero value is a kubelet that reports its Node not Ready.
type Unhealthy struct {
	// Condition, when set, is a node condition the machine reports True from then on, as
	// node-problem-detector reports KernelDeadlock or ReadonlyFilesystem; the kubelet stays
	// Ready. It must not be Ready.
	Condition string
	// Silent makes the kubelet stop posting its status and renewing its Lease, as a
	// machine that hangs or drops off the network does: kube-controller-manager marks the
	// Node's Ready condition Unknown once its grace period passes, in real time. Without
	// it (and without a condition), the kubelet reports Ready False, as a kubelet whose
	// container runtime went down does, which needs no controller and follows the
	// time scale.
	Silent bool
}

// Validate reports a mistake in how.
func (u Unhealthy) Validate() error {
	if u.Condition == "Ready" {
		return fmt.Errorf("the condition of an unhealthy node must not be Ready: leave it empty for a kubelet that reports Ready False")
	}
	if u.Condition != "" && u.Silent {
		return fmt.Errorf("a silent kubelet reports no condition %s: set condition or silent, not both", u.Condition)
	}
	return nil
}

// sickness is an instance's kubelet failing as how says since since, during the boot
// numbered boot: the next boot, after a stop and a start, is healthy again.
type sickness struct {
	how   Unhealthy
	since time.Time
	boot  int
}

// messageRuntimeDown is what a kubelet whose container runtime went down reports.
const messageRuntimeDown = "container runtime is down"

// MakeUnhealthy makes the kubelets of running instances fail as how says, from now until
// their next boot. It refuses the whole call, changing nothing, when an instance is
// unknown or not running, or how is not valid.
func (c *Cloud) MakeUnhealthy(ids []string, how Unhealthy) error {
	if err := how.Validate(); err != nil {
		return fmt.Errorf("fake cloud: %w", err)
	}
	return c.applyToAll("MakeUnhealthy", ids, func(inst *instance) error {
		if inst.State != cloudprovider.StateRunning {
			return cloudprovider.NewError(cloudprovider.CodeInvalidState, "MakeUnhealthy", inst.ID, "the instance is %s, not running", inst.State)
		}
		return nil
	}, func(inst *instance, now time.Time) {
		inst.sick = &sickness{how: how, since: now, boot: inst.boot.Number}
	})
}

// sickNow returns how the instance's kubelet fails in its current boot, if it does.
func (i *instance) sickNow() (*sickness, bool) {
	if i.sick == nil || i.sick.boot != i.boot.Number {
		return nil, false
	}
	return i.sick, true
}
