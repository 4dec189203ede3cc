package scheduling

import (
	"testing"
)

func TestDebugCost(t *testing.T) {
	in := mixInput(1, mixOptions{pods: 5000})
	r := Solve(in)
	byPool := map[string][]Launch{}
	for _, l := range r.Launches {
		byPool[l.Pool] = append(byPool[l.Pool], l)
	}
	for pool, ls := range byPool {
		rr := Result{Launches: ls}
		t.Logf("pool %s: %d launches cost %.2f bound %.2f", pool, len(ls), launchCost(rr), launchCostBound(in, rr, false))
		for _, l := range ls[:min(len(ls), 8)] {
			t.Logf("   %s $%.3f cpu %v mem %v pods %d", l.InstanceTypes[0], l.PricePerHour, l.Requests.Cpu(), l.Requests.Memory(), len(l.Pods))
		}
	}
}
