package physics

import "fmt"

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
