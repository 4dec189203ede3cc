package fakecloud

import (
	"fmt"
	"time"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/physics"
)

// sickness is an instance's kubelet failing as how says since since, during the boot
// numbered boot: the next boot, after a stop and a start, is healthy again.
type sickness struct {
	how   physics.Unhealthy
	since time.Time
	boot  int
}

// MakeUnhealthy makes the kubelets of running instances fail as how says, from now until
// their next boot. It refuses the whole call, changing nothing, when an instance is
// unknown or not running, or how is not valid.
func (c *Cloud) MakeUnhealthy(ids []string, how physics.Unhealthy) error {
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
