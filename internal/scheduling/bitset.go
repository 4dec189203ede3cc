package scheduling

import "math/bits"

// bitset is a set of small integers, such as the offerings a new claim may still use.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bitset) clear(i int)    { b[i/64] &^= 1 << (i % 64) }

// clearRange removes the elements in [first, last), a word at a time.
func (b bitset) clearRange(first, last int) {
	for first < last {
		word, mask, n := wordOf(first, last)
		b[word] &^= mask
		first += n
	}
}

// setRange adds the elements in [first, last), a word at a time.
func (b bitset) setRange(first, last int) {
	for first < last {
		word, mask, n := wordOf(first, last)
		b[word] |= mask
		first += n
	}
}

// wordOf is the word that holds first, the mask of the elements of [first, last) in
// it, and how many they are.
func wordOf(first, last int) (word int, mask uint64, n int) {
	word, bit := first/64, first%64
	n = min(64-bit, last-first)
	mask = ^uint64(0)
	if n < 64 {
		mask = (uint64(1)<<n - 1) << bit
	}
	return word, mask, n
}

// clone returns a copy.
func (b bitset) clone() bitset { return append(bitset(nil), b...) }

// and keeps in b only what o holds too.
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// andNot drops from b what o holds.
func (b bitset) andNot(o bitset) {
	for i := range b {
		b[i] &^= o[i]
	}
}

// intersects reports whether b and o share an element.
func (b bitset) intersects(o bitset) bool {
	for i := range b {
		if b[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// within reports whether every element of b is in o.
func (b bitset) within(o bitset) bool {
	for i := range b {
		if b[i]&^o[i] != 0 {
			return false
		}
	}
	return true
}

// intersectsRange reports whether b holds an element in [first, last).
func (b bitset) intersectsRange(first, last int) bool {
	for i := first; i < last; i++ {
		if b.has(i) {
			return true
		}
	}
	return false
}

// equal reports whether b and o hold the same elements.
func (b bitset) equal(o bitset) bool {
	for i := range b {
		if b[i] != o[i] {
			return false
		}
	}
	return true
}

// empty reports whether b holds nothing.
func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// each calls f with every element in increasing order.
func (b bitset) each(f func(int)) {
	for i, w := range b {
		for w != 0 {
			f(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}
