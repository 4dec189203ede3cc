package nodeclaim

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func TestOnlyAResumedPoolWakesItsClaims(t *testing.T) {
	pool := func(paused bool) *v1beta1.NodePool {
		return &v1beta1.NodePool{Spec: v1beta1.NodePoolSpec{Paused: paused}}
	}
	cases := []struct {
		name     string
		old, new bool
		want     bool
	}{
		{"resumed", true, false, true},
		{"paused", false, true, false},
		{"still paused", true, true, false},
		{"never paused", false, false, false},
	}
	for _, tc := range cases {
		if got := poolResumed.Update(event.UpdateEvent{ObjectOld: pool(tc.old), ObjectNew: pool(tc.new)}); got != tc.want {
			t.Errorf("%s: poolResumed = %v, want %v", tc.name, got, tc.want)
		}
	}
	if poolResumed.Create(event.CreateEvent{Object: pool(false)}) || poolResumed.Delete(event.DeleteEvent{Object: pool(true)}) {
		t.Error("a pool's creation or deletion resumes nothing")
	}
}
