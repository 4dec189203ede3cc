package nodepool

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// A pass compares what it computes with the status written last. While the cache has
// not caught up with a write, that is the status written, not the older one the cache
// shows; once the cache shows it, or a minute after the write, it is the cache's.
func TestWrittenStatusStandsForACacheThatLags(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	s := &statusWrites{now: func() time.Time { return now }}
	withStandby := func(n int32) v1beta1.NodePoolStatus {
		return v1beta1.NodePoolStatus{Nodes: v1beta1.NodeCounts{Standby: n}}
	}
	pool := func(status v1beta1.NodePoolStatus) *v1beta1.NodePool {
		return &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: status}
	}

	if got := s.written(pool(withStandby(9))); got.Nodes.Standby != 9 {
		t.Fatalf("before any write: %d standby, want the cache's 9", got.Nodes.Standby)
	}
	written := withStandby(10)
	s.wrote("p", &written)
	if got := s.written(pool(withStandby(9))); got.Nodes.Standby != 10 {
		t.Fatalf("the cache lags: %d standby, want the written 10", got.Nodes.Standby)
	}
	if got := s.written(pool(withStandby(10))); got.Nodes.Standby != 10 {
		t.Fatalf("the cache caught up: %d standby, want 10", got.Nodes.Standby)
	}
	// Seen: from now on the cache is the truth, whatever it says.
	if got := s.written(pool(withStandby(7))); got.Nodes.Standby != 7 {
		t.Fatalf("after the cache showed the write: %d standby, want the cache's 7", got.Nodes.Standby)
	}

	s.wrote("p", &written)
	now = now.Add(unseenFor)
	if got := s.written(pool(withStandby(7))); got.Nodes.Standby != 7 {
		t.Fatalf("a minute after a write the cache never showed: %d standby, want the cache's 7", got.Nodes.Standby)
	}
	s.wrote("p", nil)
	if got := s.written(pool(withStandby(7))); got.Nodes.Standby != 7 {
		t.Fatalf("after a failed write: %d standby, want the cache's 7", got.Nodes.Standby)
	}
}

// A pass on a cache that has not caught up with the last write starts from the status
// written, so it keeps the times of the conditions that write changed, and writes
// nothing when nothing else changed. Started from the cache's older status, it would
// make the pool Ready once more, at a new time, and write that (seen under load, in
// test/integration/warmpool's TestPoolStatusWrittenAtMostOncePerSecond).
func TestAPassOnALaggingCacheWritesNothingNew(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	s := &statusWrites{now: func() time.Time { return now }}
	standby := []v1beta1.NodeClaim{claimIn(v1beta1.PhaseStandby), claimIn(v1beta1.PhaseStandby)}
	warming := &v1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	writeStatus(warming, observation{target: 2, claims: standby[:1]})

	// The write that makes the pool Ready, as the API server stores it: times to the second.
	ready := warming.DeepCopy()
	writeStatus(ready, observation{target: 2, claims: standby})
	for i := range ready.Status.Conditions {
		ready.Status.Conditions[i].LastTransitionTime = metav1.NewTime(now.Add(-time.Second))
	}
	s.wrote("p", &ready.Status)

	// The next pass, a little later, on a cache that still shows the pool warming.
	now = now.Add(300 * time.Millisecond)
	pass := warming.DeepCopy()
	written := s.begin(pass)
	writeStatus(pass, observation{target: 2, claims: standby})
	if !equality.Semantic.DeepEqual(*written, pass.Status) {
		t.Errorf("the pass would write its status again; written %+v, computed %+v", written.Conditions, pass.Status.Conditions)
	}
}
