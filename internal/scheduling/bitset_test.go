package scheduling

import "testing"

func TestClearRange(t *testing.T) {
	for _, r := range [][2]int{{0, 0}, {0, 1}, {3, 64}, {0, 64}, {60, 70}, {64, 128}, {5, 190}, {127, 129}} {
		b := newBitset(200)
		for i := range 200 {
			b.set(i)
		}
		b.clearRange(r[0], r[1])
		for i := range 200 {
			if want := i < r[0] || i >= r[1]; b.has(i) != want {
				t.Fatalf("clearRange(%d, %d): element %d present %v, want %v", r[0], r[1], i, b.has(i), want)
			}
		}
	}
}

func TestSetRange(t *testing.T) {
	for _, r := range [][2]int{{0, 0}, {0, 1}, {3, 64}, {0, 64}, {60, 70}, {64, 128}, {5, 190}, {127, 129}} {
		b := newBitset(200)
		b.setRange(r[0], r[1])
		for i := range 200 {
			if want := i >= r[0] && i < r[1]; b.has(i) != want {
				t.Fatalf("setRange(%d, %d): element %d present %v, want %v", r[0], r[1], i, b.has(i), want)
			}
		}
	}
}
