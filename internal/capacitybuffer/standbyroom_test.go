package capacitybuffer

import (
	"slices"
	"testing"
)

func TestStandbyRoomSumsBuffersAndTellsChangedPools(t *testing.T) {
	room := NewStandbyRoom()
	var heard []string
	room.OnChange(func(pool string) { heard = append(heard, pool) })

	room.Set("ns/a", map[string]int32{"web": 2})
	room.Set("ns/b", map[string]int32{"web": 1, "batch": 3})
	if got := room.For("web"); got != 3 {
		t.Errorf("web: got %d standby nodes, want 3", got)
	}
	if got := room.For("batch"); got != 3 {
		t.Errorf("batch: got %d standby nodes, want 3", got)
	}
	heard = nil
	room.Set("ns/b", map[string]int32{"web": 1, "batch": 3})
	if len(heard) != 0 {
		t.Errorf("an unchanged buffer told pools %v", heard)
	}
	room.Set("ns/b", nil)
	slices.Sort(heard)
	if !slices.Equal(heard, []string{"batch", "web"}) {
		t.Errorf("forgetting a buffer told %v, want batch and web", heard)
	}
	if got := room.For("batch"); got != 0 {
		t.Errorf("batch after the buffer went: got %d, want 0", got)
	}
	if got := room.Buffers(); !slices.Equal(got, []string{"ns/a"}) {
		t.Errorf("buffers: got %v, want [ns/a]", got)
	}
	var none *StandbyRoom
	none.Set("ns/a", map[string]int32{"web": 1})
	if none.For("web") != 0 {
		t.Error("a nil registry is not empty")
	}
}
