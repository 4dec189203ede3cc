package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestInterruptDefaults(t *testing.T) {
	s, err := Parse([]byte("steps:\n- interrupt: {}\n- interrupt: {kind: scheduledChange, notice: 10m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	spot, scheduled := s.Steps[0].Interrupt, s.Steps[1].Interrupt
	if spot.KindOrDefault() != KindSpot || spot.NoticeOrDefault() != 2*time.Minute || spot.CapacityTypeOrDefault() != "spot" || spot.BatchesOrDefault() != 1 {
		t.Errorf("defaults: kind %s, notice %s, capacity type %s, batches %d", spot.KindOrDefault(), spot.NoticeOrDefault(), spot.CapacityTypeOrDefault(), spot.BatchesOrDefault())
	}
	if scheduled.CapacityTypeOrDefault() != "" || scheduled.NoticeOrDefault() != 10*time.Minute {
		t.Errorf("a scheduled change picks capacity type %q with notice %s, want any and 10m", scheduled.CapacityTypeOrDefault(), scheduled.NoticeOrDefault())
	}
}

func TestInterruptAndUnhealthyParse(t *testing.T) {
	s, err := Parse([]byte(`steps:
- interrupt: {nodePool: web, share: 0.5, every: 30s, batches: 3, notice: 2m}
- unhealthy: {nodePool: web, count: 2, condition: KernelDeadlock}
- faults: {insufficientCapacity: [{capacityType: spot}]}
- wait:
    claims: [{capacityType: spot, pool: web, equals: 0}]
    nodes: [{capacityType: on-demand, atLeast: 1}]
    podsAwaitingReplacement: {equals: 0}
    podsKilledByInterruption: {equals: 0}
    interruptionRecoveryP99: {atMost: 30}
    timeout: 5m
`))
	if err != nil {
		t.Fatal(err)
	}
	if in := s.Steps[0].Interrupt; in.Share == nil || *in.Share != 0.5 || in.Every.Duration != 30*time.Second || in.Batches != 3 {
		t.Errorf("interrupt parsed as %+v", in)
	}
	if u := s.Steps[1].Unhealthy; u.CountOrDefault() != 2 || u.Condition != "KernelDeadlock" {
		t.Errorf("unhealthy parsed as %+v", u)
	}
	if o := s.Steps[2].Faults.InsufficientCapacity[0]; o.CapacityType != "spot" {
		t.Errorf("offering parsed as %+v", o)
	}
	names := []string{}
	for _, c := range s.Steps[3].Wait.Counts() {
		names = append(names, c.Name)
	}
	for _, want := range []string{"claims of pool web (spot)", "nodes (on-demand) as registered", "podsAwaitingReplacement", "podsKilledByInterruption", "interruptionRecoveryP99"} {
		if !strings.Contains(strings.Join(names, "|"), want) {
			t.Errorf("the wait's counts %v lack %q", names, want)
		}
	}
}

func TestInterruptAndUnhealthyRejects(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"bad kind":              {"steps:\n- interrupt: {kind: hurricane}\n", `kind "hurricane" is not one of`},
		"count and share":       {"steps:\n- interrupt: {count: 1, share: 0.5}\n", "set one, not both"},
		"zero count":            {"steps:\n- interrupt: {count: 0}\n", "count must be positive"},
		"share above one":       {"steps:\n- interrupt: {share: 1.5}\n", "share must be within (0, 1]"},
		"every without batches": {"steps:\n- interrupt: {every: 30s}\n", "every needs batches"},
		"batches without every": {"steps:\n- interrupt: {batches: 3}\n", "batches needs every"},
		"negative every":        {"steps:\n- interrupt: {every: -1s, batches: 2}\n", "every must be positive"},
		"zero notice":           {"steps:\n- interrupt: {notice: 0s}\n", "notice must be positive"},
		"rebalance notice":      {"steps:\n- interrupt: {kind: rebalance, notice: 2m}\n", "has no notice"},
		"on-demand spot":        {"steps:\n- interrupt: {capacityType: on-demand}\n", "spot instances only"},
		"bad capacity type":     {"steps:\n- interrupt: {kind: scheduledChange, capacityType: reserved}\n", `capacityType "reserved"`},
		"bad pool":              {"steps:\n- interrupt: {nodePool: Web_1}\n", `nodePool "Web_1"`},
		"unhealthy Ready":       {"steps:\n- unhealthy: {condition: Ready}\n", "leave condition empty"},
		"unhealthy silent cond": {"steps:\n- unhealthy: {condition: KernelDeadlock, silent: true}\n", "set one, not both"},
		"unhealthy negative":    {"steps:\n- unhealthy: {count: -1}\n", "count must be positive"},
		"unhealthy bad cond":    {"steps:\n- unhealthy: {condition: 'not a condition'}\n", `condition "not a condition"`},
		"claims capacity type":  {"steps:\n- expect: {claims: [{capacityType: cheap, equals: 1}]}\n", `capacityType "cheap"`},
		"nodes capacity type":   {"steps:\n- expect: {nodes: [{capacityType: cheap, equals: 1}]}\n", `capacityType "cheap"`},
		"fault capacity type":   {"steps:\n- faults: {insufficientCapacity: [{capacityType: cheap}]}\n", `capacityType "cheap"`},
		"interrupt on aws":      {"cloud: aws\nsteps:\n- interrupt: {}\n", "steps[0]: interrupt: only the fake cloud"},
		"unhealthy on aws":      {"cloud: aws\nsteps:\n- unhealthy: {}\n", "steps[0]: unhealthy: only the fake cloud"},
		"interrupt and sleep":   {"steps:\n- interrupt: {}\n  sleep: 1s\n", "exactly one action"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}
