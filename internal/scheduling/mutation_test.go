package scheduling

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/scheduling/verifier"
)

// place is where a mutation moves a pod: a node that exists, or a launch (by index, or
// a new one of the given instance type).
type place struct {
	node      string
	launch    int
	newLaunch string
}

// moved returns r with pod taken from where the simulation put it and put at to; the
// placement order stays, and the launches' requests follow their pods.
func moved(r Result, pod *corev1.Pod, to place) Result {
	out := Result{Existing: map[*corev1.Pod]string{}, InFlight: map[*corev1.Pod]string{}, Order: r.Order, Unschedulable: r.Unschedulable}
	for p, n := range r.Existing {
		if p != pod {
			out.Existing[p] = n
		}
	}
	for p, n := range r.InFlight {
		if p != pod {
			out.InFlight[p] = n
		}
	}
	for _, s := range r.Starts {
		s.Pods = slices.DeleteFunc(slices.Clone(s.Pods), func(p *corev1.Pod) bool { return p == pod })
		out.Starts = append(out.Starts, s)
	}
	for _, l := range r.Launches {
		l.Pods = slices.DeleteFunc(slices.Clone(l.Pods), func(p *corev1.Pod) bool { return p == pod })
		out.Launches = append(out.Launches, l)
	}
	switch {
	case to.node != "":
		out.Existing[pod] = to.node
	case to.newLaunch != "":
		out.Launches = append(out.Launches, Launch{Pool: r.Launches[0].Pool, InstanceTypes: []string{to.newLaunch}, Pods: []*corev1.Pod{pod}})
	default:
		out.Launches[to.launch].Pods = append(out.Launches[to.launch].Pods, pod)
	}
	for i := range out.Launches {
		out.Launches[i].Requests = requestsOf(out.Launches[i].Pods)
	}
	return out
}

// launchIn returns the index of the launch tied to zone.
func launchIn(t *testing.T, r Result, zone string) int {
	for i, l := range r.Launches {
		if slices.Equal(l.Zones, []string{zone}) {
			return i
		}
	}
	t.Fatalf("no launch in %s: %+v", zone, r.Launches)
	return -1
}

// The verifier catches each rule broken once: every case is a result of the simulation,
// verified clean, then one pod moved onto a node that breaks the rule.
func TestVerifierCatchesEachRuleBroken(t *testing.T) {
	small := func() []Pool {
		return []Pool{poolOf("p", smallCatalog()[:1])}
	}
	two := func(podsOn ...*corev1.Pod) []Node {
		return []Node{{Node: nodeOf("n1", "4", "16Gi", "zone-a"), Pods: podsOn}, {Node: nodeOf("n2", "4", "16Gi", "zone-a")}}
	}
	db := func(opts ...func(*corev1.Pod)) []*corev1.Pod {
		return pods(1, "db", "100m", "10Mi", append([]func(*corev1.Pod){labelled("app", "db")}, opts...)...)
	}
	for _, tc := range []struct {
		rule   verifier.Rule
		name   string // when the rule has several cases
		in     Input
		mutate func(t *testing.T, in Input, r Result) Result
	}{{
		rule: verifier.RuleResources,
		in:   Input{Pods: pods(2, "big", "1500m", "10Mi"), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, r.Launches[1].Pods[0], place{launch: 0})
		},
	}, {
		rule: verifier.RuleNodeAffinity,
		in:   Input{Pods: append(pods(1, "a", "100m", "10Mi", selecting(corev1.LabelTopologyZone, "zone-a")), pods(1, "b", "100m", "10Mi", selecting(corev1.LabelTopologyZone, "zone-b"))...), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, in.Pods[1], place{launch: launchIn(t, r, "zone-a")})
		},
	}, {
		rule: verifier.RuleTaints,
		in: Input{Pods: pods(1, "web", "100m", "10Mi"), Pools: small(), Nodes: []Node{{Node: func() *corev1.Node {
			n := nodeOf("t", "4", "16Gi", "zone-a")
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
			return n
		}()}}},
		mutate: func(t *testing.T, in Input, r Result) Result { return moved(r, in.Pods[0], place{node: "t"}) },
	}, {
		rule: verifier.RuleHostPorts,
		in:   Input{Pods: pods(2, "web", "100m", "10Mi", hostPortOf(8080)), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, r.Launches[1].Pods[0], place{launch: 0})
		},
	}, {
		rule: verifier.RuleTopologySpread, name: "zone spread",
		in: Input{Pods: pods(3, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelTopologyZone, corev1.DoNotSchedule, "web")), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, r.Launches[launchIn(t, r, "zone-b")].Pods[0], place{launch: launchIn(t, r, "zone-a")})
		},
	}, {
		rule: verifier.RuleTopologySpread, name: "hostname spread",
		in: Input{Pods: pods(2, "web", "100m", "10Mi", labelled("app", "web"), spreadOver(corev1.LabelHostname, corev1.DoNotSchedule, "web")), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, r.Launches[1].Pods[0], place{launch: 0})
		},
	}, {
		rule:   verifier.RulePodAffinity,
		in:     Input{Pods: pods(1, "web", "100m", "10Mi", podAffinity(corev1.LabelHostname, "db", false, false)), Nodes: two(db()...), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result { return moved(r, in.Pods[0], place{node: "n2"}) },
	}, {
		rule:   verifier.RulePodAntiAffinity,
		in:     Input{Pods: pods(1, "web", "100m", "10Mi", podAffinity(corev1.LabelHostname, "db", true, false)), Nodes: two(db()...), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result { return moved(r, in.Pods[0], place{node: "n1"}) },
	}, {
		rule:   verifier.RuleExistingAntiAffinity,
		in:     Input{Pods: pods(1, "web", "100m", "10Mi", labelled("app", "web")), Nodes: two(db(podAffinity(corev1.LabelHostname, "web", true, false))...), Pools: small()},
		mutate: func(t *testing.T, in Input, r Result) Result { return moved(r, in.Pods[0], place{node: "n1"}) },
	}, {
		rule: verifier.RulePoolNodes,
		in:   Input{Pods: pods(2, "web", "100m", "10Mi"), Pools: []Pool{withLimits(small()[0], 1, nil, nil)}},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, in.Pods[1], place{newLaunch: "small"})
		},
	}, {
		rule: verifier.RulePoolCPU,
		in:   Input{Pods: pods(2, "web", "100m", "10Mi"), Pools: []Pool{withLimits(poolOf("p", smallCatalog()), -1, ptr.To[int64](8000), nil)}},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, in.Pods[1], place{newLaunch: "large"})
		},
	}, {
		rule: verifier.RulePoolMemory,
		in:   Input{Pods: pods(2, "web", "100m", "10Mi"), Pools: []Pool{withLimits(poolOf("p", smallCatalog()), -1, nil, ptr.To[int64](32<<30))}},
		mutate: func(t *testing.T, in Input, r Result) Result {
			return moved(r, in.Pods[1], place{newLaunch: "large"})
		},
	}} {
		t.Run(cmp.Or(tc.name, string(tc.rule)), func(t *testing.T) {
			r := solve(t, tc.in)
			if t.Failed() || len(r.Unschedulable) > 0 {
				t.Fatalf("the simulation's own result: %+v", r)
			}
			found := violations(t, tc.in, tc.mutate(t, tc.in, r))
			if !slices.ContainsFunc(found, func(v string) bool { return strings.Contains(v, string(tc.rule)+":") }) {
				t.Fatalf("the verifier missed %s; it found %v", tc.rule, found)
			}
		})
	}
}

func withLimits(p Pool, nodes int, cpu, memory *int64) Pool {
	p.NodesLeft, p.Left = nodes, map[corev1.ResourceName]int64{}
	if cpu != nil {
		p.Left[corev1.ResourceCPU] = *cpu
	}
	if memory != nil {
		p.Left[corev1.ResourceMemory] = *memory
	}
	return p
}
