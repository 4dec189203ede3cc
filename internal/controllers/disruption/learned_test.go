package disruption

import (
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/windows"
)

// A learned pool running 4 nodes ahead of its peak, with a warm-pool target of 5, keeps
// 4 running and up to 5 standing by, though its spec and windows ask for none; a
// window's larger figures win.
func TestTheLearnedTargetsHoldDisruption(t *testing.T) {
	pool := &v1beta1.NodePool{Status: v1beta1.NodePoolStatus{StandbyTarget: 5, Learned: &v1beta1.LearnedStatus{Running: 4, Target: 5}}}
	got := withPoolStatus(windows.Targets{}, pool)
	if got.MinRunning != 4 || got.MaxStandby != 5 {
		t.Errorf("targets %+v, want minRunning 4 and maxStandby 5", got)
	}
	got = withPoolStatus(windows.Targets{MinRunning: 6, MaxStandby: 8}, pool)
	if got.MinRunning != 6 || got.MaxStandby != 8 {
		t.Errorf("targets %+v, want the window's 6 and 8", got)
	}
	if got := withPoolStatus(windows.Targets{MinRunning: 1}, &v1beta1.NodePool{}); got.MinRunning != 1 || got.MaxStandby != 0 {
		t.Errorf("targets %+v of a pool with no status, want the window's", got)
	}
}
