package verifier

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newNode(name, zone, cpu string, opts ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10"),
		}},
	}
	for _, o := range opts {
		o(n)
	}
	return n
}

func tainted(n *corev1.Node) {
	n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
}

func pod(name, app, cpu string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu),
		}}}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func selects(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func spread(key, app string, maxSkew int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selects(app),
		})
	}
}

func affinity(key, app string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selects(app)}}}}
	}
}

func antiAffinity(key, app string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: key, LabelSelector: selects(app)}}}}
	}
}

func hostPort(ip string, port int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, HostIP: ip})
	}
}

func nodeSelector(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
}

func zonesIn(zones ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: zones}}}},
		}}}
	}
}

func inNamespace(ns string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Namespace = ns }
}

// ruleCase is a case and the rules it breaks.
type ruleCase struct {
	c    Case
	want []Rule
}

// checkRules checks each case breaks its rules and no others.
func checkRules(t *testing.T, cases map[string]ruleCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := rules(tc.c)
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("rules broken %v, want %v: %v", got, want, Check(tc.c))
			}
		})
	}
}

// rules runs a case and returns the rules it breaks.
func rules(c Case) []Rule {
	var out []Rule
	for _, v := range Check(c) {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// place binds pods in order: pods[i] onto nodes named by on[i].
func place(on []string, pods ...*corev1.Pod) []Placement {
	out := make([]Placement, len(pods))
	for i, p := range pods {
		out[i] = Placement{Pod: p, Node: on[i]}
	}
	return out
}

func nodes(ns ...*corev1.Node) []Node {
	out := make([]Node, len(ns))
	for i, n := range ns {
		out[i] = Node{Node: n}
	}
	return out
}

// Each case is kube-scheduler's decision at the moment of each binding, including the
// cases a check of the final state alone would get wrong.
func TestCheck(t *testing.T) {
	a, b, c := newNode("a", "zone-a", "4"), newNode("b", "zone-b", "4"), newNode("c", "zone-c", "4")
	ds := pod("ds", "ds", "1")
	checkRules(t, map[string]ruleCase{
		"fits":              {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "x", "2"), pod("p2", "x", "2"))}, nil},
		"cpu":               {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "x", "3"), pod("p2", "x", "2"))}, []Rule{RuleResources}},
		"unknown node":      {Case{Nodes: nodes(a), Placements: place([]string{"z"}, pod("p1", "x", "1"))}, []Rule{RuleUnknownNode}},
		"daemonsets first":  {Case{Nodes: []Node{{Node: a, AwaitsDaemonSets: true}}, DaemonSets: []*corev1.Pod{ds}, Placements: place([]string{"a"}, pod("p1", "x", "3500m"))}, []Rule{RuleResources}},
		"node selector":     {Case{Nodes: nodes(a), Placements: place([]string{"a"}, pod("p1", "x", "1", nodeSelector(corev1.LabelTopologyZone, "zone-b")))}, []Rule{RuleNodeAffinity}},
		"taint":             {Case{Nodes: nodes(newNode("t", "zone-a", "4", tainted)), Placements: place([]string{"t"}, pod("p1", "x", "1"))}, []Rule{RuleTaints}},
		"host port":         {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "x", "1", hostPort("", 80)), pod("p2", "x", "1", hostPort("10.0.0.1", 80)))}, []Rule{RuleHostPorts}},
		"host ports differ": {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "x", "1", hostPort("10.0.0.2", 80)), pod("p2", "x", "1", hostPort("10.0.0.1", 80)))}, nil},
		// Zone spread counts only the domains of eligible nodes: with zone-c out of the
		// pods' reach, two pods in zone-a and one in zone-b are within skew 1.
		"spread domains": {Case{Nodes: nodes(a, b, c), Placements: place([]string{"a", "b", "a"},
			pod("p1", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1), zonesIn("zone-a", "zone-b")),
			pod("p2", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1), zonesIn("zone-a", "zone-b")),
			pod("p3", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1), zonesIn("zone-a", "zone-b")))}, nil},
		"spread all domains": {Case{Nodes: nodes(a, b, c), Placements: place([]string{"a", "b", "a"},
			pod("p1", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)),
			pod("p2", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)),
			pod("p3", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)))}, []Rule{RuleTopologySpread}},
		"spread skew": {Case{Nodes: nodes(a, b, c), Placements: place([]string{"a", "a"},
			pod("p1", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)), pod("p2", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)))}, []Rule{RuleTopologySpread}},
		// A selector that does not match its own pod: the pod does not count itself.
		"spread without self": {Case{Nodes: nodes(a, b), Placements: place([]string{"a", "a", "a"},
			pod("p1", "db", "100m"), pod("p2", "web", "100m", spread(corev1.LabelTopologyZone, "db", 1)), pod("p3", "web", "100m", spread(corev1.LabelTopologyZone, "db", 1)))}, nil},
		"spread minDomains": {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"},
			pod("p1", "web", "100m"), pod("p2", "web", "100m", func(p *corev1.Pod) {
				spread(corev1.LabelTopologyZone, "web", 1)(p)
				p.Spec.TopologySpreadConstraints[0].MinDomains = ptr.To[int32](2)
			}))}, []Rule{RuleTopologySpread}},
		"spread missing key": {Case{Nodes: nodes(newNode("nozone", "", "4", func(n *corev1.Node) { delete(n.Labels, corev1.LabelTopologyZone) })),
			Placements: place([]string{"nozone"}, pod("p1", "web", "100m", spread(corev1.LabelTopologyZone, "web", 1)))}, []Rule{RuleTopologySpread}},
		"hostname spread later node": {Case{Nodes: nodes(a, b), Placements: place([]string{"a", "b", "a"},
			pod("p1", "web", "100m", spread(corev1.LabelHostname, "web", 1)), pod("p2", "web", "100m", spread(corev1.LabelHostname, "web", 1)), pod("p3", "web", "100m", spread(corev1.LabelHostname, "web", 1)))}, nil},
		// The first pod of a group that selects itself goes anywhere; one that does not
		// select itself waits for a pod it selects.
		"affinity first of its group": {Case{Nodes: nodes(a, b), Placements: place([]string{"a", "a"},
			pod("p1", "web", "100m", affinity(corev1.LabelHostname, "web")), pod("p2", "web", "100m", affinity(corev1.LabelHostname, "web")))}, nil},
		"affinity not its own group": {Case{Nodes: nodes(a), Placements: place([]string{"a"}, pod("p1", "web", "100m", affinity(corev1.LabelHostname, "db")))}, []Rule{RulePodAffinity}},
		"affinity elsewhere":         {Case{Nodes: nodes(a, b), Placements: place([]string{"a", "b"}, pod("p1", "db", "100m"), pod("p2", "web", "100m", affinity(corev1.LabelHostname, "db")))}, []Rule{RulePodAffinity}},
		"affinity in zone":           {Case{Nodes: nodes(a, newNode("a2", "zone-a", "4")), Placements: place([]string{"a", "a2"}, pod("p1", "db", "100m"), pod("p2", "web", "100m", affinity(corev1.LabelTopologyZone, "db")))}, nil},
		"anti-affinity":              {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "db", "100m"), pod("p2", "web", "100m", antiAffinity(corev1.LabelHostname, "db")))}, []Rule{RulePodAntiAffinity}},
		// The pod bound first repels the one bound later, whose own terms are empty.
		"existing anti-affinity":        {Case{Nodes: nodes(a, newNode("a2", "zone-a", "4")), Placements: place([]string{"a", "a2"}, pod("p1", "db", "100m", antiAffinity(corev1.LabelTopologyZone, "web")), pod("p2", "web", "100m"))}, []Rule{RuleExistingAntiAffinity}},
		"anti-affinity other namespace": {Case{Nodes: nodes(a), Placements: place([]string{"a", "a"}, pod("p1", "db", "100m", inNamespace("other")), pod("p2", "web", "100m", antiAffinity(corev1.LabelHostname, "db")))}, nil},
		"pool nodes": {Case{Nodes: []Node{{Node: a, Pool: "p", Capacity: a.Status.Allocatable}, {Node: b, Pool: "p", Capacity: b.Status.Allocatable}},
			Limits: []Limit{{Pool: "p", Nodes: 1}}}, []Rule{RulePoolNodes}},
		"pool cpu": {Case{Nodes: []Node{{Node: a, Pool: "p", Capacity: a.Status.Allocatable}, {Node: b, Pool: "p", Capacity: b.Status.Allocatable}},
			Limits: []Limit{{Pool: "p", Nodes: -1, Resources: corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(7, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(16<<30, resource.BinarySI)}}}}, []Rule{RulePoolCPU}},
		"pool memory": {Case{Nodes: []Node{{Node: a, Pool: "p", Capacity: a.Status.Allocatable}},
			Limits: []Limit{{Pool: "p", Nodes: -1, Resources: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(1<<30, resource.BinarySI)}}}}, []Rule{RulePoolMemory}},
		// Node a has no GPU: its capacity of one counts 0, so a GPU limit of 0 holds.
		"pool gpu": {Case{Nodes: []Node{{Node: a, Pool: "p", Capacity: a.Status.Allocatable}, {Node: b, Pool: "p", Capacity: withGPUs(b.Status.Allocatable, 2)}},
			Limits: []Limit{{Pool: "p", Nodes: -1, Resources: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(1, resource.DecimalSI)}}}}, []Rule{RulePoolResource}},
		"pool gpu within": {Case{Nodes: []Node{{Node: a, Pool: "p", Capacity: a.Status.Allocatable}, {Node: b, Pool: "p", Capacity: withGPUs(b.Status.Allocatable, 2)}},
			Limits: []Limit{{Pool: "p", Nodes: -1, Resources: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)}}}}, nil},
	})
}

func TestAdmitting(t *testing.T) {
	c := Case{Nodes: nodes(newNode("a", "zone-a", "4"), newNode("b", "zone-b", "4")), Placements: place([]string{"a"}, pod("p1", "db", "3"))}
	got := Admitting(c, []*corev1.Pod{pod("big", "x", "2"), pod("near", "x", "100m", affinity(corev1.LabelHostname, "db")), pod("far", "x", "100m", affinity(corev1.LabelHostname, "none"))})
	if !slices.Equal(got[0], []string{"b"}) || !slices.Equal(got[1], []string{"a"}) || len(got[2]) != 0 {
		t.Fatalf("admitting %v, want [[b] [a] []]", got)
	}
}

// withGPUs is a copy of capacity with n nvidia.com/gpu.
func withGPUs(capacity corev1.ResourceList, n int64) corev1.ResourceList {
	out := capacity.DeepCopy()
	out["nvidia.com/gpu"] = *resource.NewQuantity(n, resource.DecimalSI)
	return out
}
