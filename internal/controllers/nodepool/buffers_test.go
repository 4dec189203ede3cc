package nodepool

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/capacitybuffer"
	"github.com/stratos-sh/stratos/internal/windows"
)

func TestBufferRoomRaisesTheStandbyTargetWithinAnExplicitMax(t *testing.T) {
	room := capacitybuffer.NewStandbyRoom()
	room.Set("default/spare", map[string]int32{"web": 3})
	r := &Reconciler{BufferRoom: room}
	for _, tc := range []struct {
		name   string
		pool   string
		max    *int32
		target int32
		want   int32
	}{
		{name: "no max: the ceiling follows the target", pool: "web", target: 2, want: 5},
		{name: "an explicit max bounds it", pool: "web", max: ptr.To[int32](4), target: 2, want: 4},
		{name: "a max below the target leaves the target", pool: "web", max: ptr.To[int32](1), target: 2, want: 2},
		{name: "another pool's buffers add nothing", pool: "batch", target: 2, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := &v1beta1.NodePool{}
			pool.Name = tc.pool
			pool.Spec.Standby.Max = tc.max
			got := r.withBufferRoom(pool, windows.Targets{MinStandby: tc.target}, tc.target)
			if got != tc.want {
				t.Errorf("target %d, want %d", got, tc.want)
			}
		})
	}
	if got := (&Reconciler{}).withBufferRoom(&v1beta1.NodePool{}, windows.Targets{MinStandby: 2}, 2); got != 2 {
		t.Errorf("without a registry: target %d, want 2", got)
	}
}
