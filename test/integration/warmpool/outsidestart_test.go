package warmpool_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
)

// An instance started outside Stratos while the operator was down has its Node Ready
// again before the claim looks, and the kubelet reports nothing new after that (a real
// one reports an unchanged status every five minutes, past the start timeout): the claim
// follows it to Running, where judging readiness from when it noticed the start timed
// the start out and removed a running node.
func TestAnOutsideStartNoticedLateRuns(t *testing.T) {
	f := newFixture(t, func(o *nodeclaim.Options) { o.StartTimeout = 10 * time.Second })
	f.Pool("late", 1, nil)
	claim := f.WaitForPhase("late", 1, v1beta1.PhaseStandby)[0]
	stoodBy := claim.Status.LastPhaseChangeTime.Time // stored to the second
	// Ready times are stored to the second too: a Ready reported within the second the
	// claim stood by in cannot be told from one before it, so the start comes after it.
	f.Eventually("the clock is past the second the claim stood by in", func() bool {
		return time.Since(stoodBy) > time.Second
	})

	f.Op.Stop()
	if err := f.Cloud.StartExternally(claim.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	var readyAt time.Time // stored to the second
	f.Eventually("the Node is Ready again", func() bool {
		for _, c := range f.Node(claim.Status.NodeName).Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.Time.Before(stoodBy.Add(time.Second)) {
				readyAt = c.LastHeartbeatTime.Time
				return true
			}
		}
		return false
	})
	// The operator comes back, and notices the start, past the second the Node last
	// reported in: it reports nothing new after that.
	f.Eventually("the clock is past the second the Node reported Ready in", func() bool {
		return time.Since(readyAt) > time.Second
	})
	f.RestartOperator(f.Opts)

	running := f.WaitForClaim(claim.Name, v1beta1.PhaseRunning)
	f.assertRunning(running)
	f.WaitForEvent(claim.Name, nodeclaim.ReasonStartedOutside)
	f.CheckInvariants()
}
