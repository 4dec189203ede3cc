package nodeclaim

import "testing"

func TestMassVanish(t *testing.T) {
	for _, tc := range []struct {
		missing, total int
		want           bool
	}{
		{0, 0, false},
		{1, 1, false}, // one alone is gone, whatever the size of its pool
		{1, 2, false},
		{2, 2, true},
		{2, 5, true},
		{2, 20, false}, // a tenth is not more than a tenth
		{3, 20, true},
		{10, 100, false},
		{11, 100, true},
	} {
		if got := massVanish(tc.missing, tc.total); got != tc.want {
			t.Errorf("massVanish(%d, %d) = %v, want %v", tc.missing, tc.total, got, tc.want)
		}
	}
}
