package verifier

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const ebs = "ebs.csi.aws.com"

func claim(name string, opts ...func(*corev1.PersistentVolumeClaim)) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func boundTo(pv string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = pv }
}

func ofClass(class string) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To(class) }
}

// volumeIn is an EBS volume that only nodes whose label key is zone may use.
func volumeIn(name, key, zone string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: ebs, VolumeHandle: "vol-" + name}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
	}
}

// class is an EBS class of the binding mode (nil: unset) that provisions in zones under
// key (none: anywhere).
func class(name string, mode *storagev1.VolumeBindingMode, key string, zones ...string) *storagev1.StorageClass {
	c := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: ebs, VolumeBindingMode: mode}
	if len(zones) > 0 {
		c.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: key, Values: zones}}}}
	}
	return c
}

var (
	waitForConsumer = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	immediate       = ptr.To(storagev1.VolumeBindingImmediate)
)

func csiNode(name, driver string, count int32) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: driver, NodeID: name, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To(count)}},
	}}}
}

func withClaims(names ...string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		for _, n := range names {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n},
			}})
		}
	}
}

// withEphemeral adds a generic ephemeral volume whose claim template asks for class.
func withEphemeral(volume, class string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(class)}},
		}}})
	}
}

func withUID(uid string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.UID = types.UID(uid) }
}

// ownedBy makes a claim the ephemeral volume controller created for pod.
func ownedBy(pod *corev1.Pod) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}}
	}
}

func withPods(n Node, pods ...*corev1.Pod) Node {
	n.Pods = pods
	return n
}

// Each volume rule, kept and broken, with claims in default, nodes a in fake-1a and b in
// fake-1b (labelled topology.kubernetes.io/zone only).
func TestCheckVolumes(t *testing.T) {
	a, b := newNode("a", "fake-1a", "4"), newNode("b", "fake-1b", "4")
	stock := Storage{
		Claims: []*corev1.PersistentVolumeClaim{
			claim("data-1a", boundTo("pv-1a"), ofClass("wait")), claim("ebs-1a", boundTo("pv-ebs-1a")), claim("old-1a", boundTo("pv-old-1a")),
			claim("gone", boundTo("pv-gone"), ofClass("wait")),
			claim("wait-1", ofClass("wait")), claim("wait-2", ofClass("wait")), claim("wait-3", ofClass("wait")), claim("wait-4", ofClass("wait")),
			claim("only-1a", ofClass("only-1a")), claim("only-1a-ebs", ofClass("only-1a-ebs")),
			claim("now", ofClass("now")), claim("unset", ofClass("unset")), claim("no-class"), claim("lost-class", ofClass("lost")),
			claim("deleting", ofClass("wait"), func(c *corev1.PersistentVolumeClaim) { c.DeletionTimestamp = &metav1.Time{} }),
			claim("lost", boundTo("pv-1a"), func(c *corev1.PersistentVolumeClaim) { c.Status.Phase = corev1.ClaimLost }),
		},
		Volumes: []*corev1.PersistentVolume{
			volumeIn("pv-1a", corev1.LabelTopologyZone, "fake-1a"),
			volumeIn("pv-ebs-1a", "topology.ebs.csi.aws.com/zone", "fake-1a"),
			volumeIn("pv-old-1a", corev1.LabelFailureDomainBetaZone, "fake-1a"),
		},
		Classes: []*storagev1.StorageClass{
			class("wait", waitForConsumer, ""),
			class("only-1a", waitForConsumer, corev1.LabelTopologyZone, "fake-1a"),
			class("only-1a-ebs", waitForConsumer, "topology.ebs.csi.aws.com/zone", "fake-1a"),
			class("now", immediate, ""), class("unset", nil, ""),
		},
	}
	limited := func(s Storage, csi ...*storagev1.CSINode) Storage {
		s.CSINodes = csi
		return s
	}
	owner := pod("owner", "x", "100m", withUID("owner-uid"), withEphemeral("scratch", "wait"))
	ownedClaims := stock
	ownedClaims.Claims = append(slices.Clone(stock.Claims), claim("owner-scratch", ofClass("wait"), ownedBy(owner)), claim("stranger-scratch", ofClass("wait")))
	on := func(n string, count int) []string { return slices.Repeat([]string{n}, count) }
	checkRules(t, map[string]ruleCase{
		"no volumes, no storage": {Case{Nodes: nodes(a), Placements: place(on("a", 1), pod("p1", "x", "1"))}, nil},
		"bound volume in zone":   {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("data-1a")))}, nil},
		"bound volume elsewhere": {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("data-1a")))}, []Rule{RuleVolumeBinding}},
		// A volume naming the zone by the EBS driver's label or the old beta label is
		// read against the node's topology.kubernetes.io/zone.
		"ebs zone alias":             {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("ebs-1a")))}, nil},
		"ebs zone alias elsewhere":   {Case{Nodes: nodes(b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("ebs-1a")))}, []Rule{RuleVolumeBinding}},
		"beta zone alias":            {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("old-1a")))}, nil},
		"beta zone alias elsewhere":  {Case{Nodes: nodes(b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("old-1a")))}, []Rule{RuleVolumeBinding}},
		"volume missing":             {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("gone")))}, []Rule{RuleVolumeBinding}},
		"claim missing":              {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("nobody")))}, []Rule{RuleVolumeBinding}},
		"claim deleting":             {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("deleting")))}, []Rule{RuleVolumeBinding}},
		"claim lost":                 {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("lost")))}, []Rule{RuleVolumeBinding}},
		"wait for consumer":          {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("wait-1")))}, nil},
		"allowed topology":           {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("only-1a")))}, nil},
		"topology not allowed":       {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("only-1a")))}, []Rule{RuleVolumeBinding}},
		"allowed topology alias":     {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("only-1a-ebs")))}, nil},
		"topology alias not allowed": {Case{Nodes: nodes(a, b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withClaims("only-1a-ebs")))}, []Rule{RuleVolumeBinding}},
		"unbound immediate":          {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("now")))}, []Rule{RuleVolumeBinding}},
		"unbound mode unset":         {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("unset")))}, []Rule{RuleVolumeBinding}},
		"unbound without class":      {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("no-class")))}, []Rule{RuleVolumeBinding}},
		"unbound class missing":      {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withClaims("lost-class")))}, []Rule{RuleVolumeBinding}},
		// An ephemeral volume whose claim is not created yet is its template's claim.
		"ephemeral to come":            {Case{Nodes: nodes(b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withEphemeral("scratch", "wait")))}, nil},
		"ephemeral to come, topology":  {Case{Nodes: nodes(b), Storage: stock, Placements: place(on("b", 1), pod("p1", "x", "1", withEphemeral("scratch", "only-1a")))}, []Rule{RuleVolumeBinding}},
		"ephemeral to come, immediate": {Case{Nodes: nodes(a), Storage: stock, Placements: place(on("a", 1), pod("p1", "x", "1", withEphemeral("scratch", "now")))}, []Rule{RuleVolumeBinding}},
		"ephemeral created":            {Case{Nodes: nodes(a), Storage: ownedClaims, Placements: place(on("a", 1), owner)}, nil},
		"ephemeral of another pod": {Case{Nodes: nodes(a), Storage: ownedClaims, Placements: place(on("a", 1),
			pod("stranger", "x", "1", withUID("stranger-uid"), withEphemeral("scratch", "wait")))}, []Rule{RuleVolumeBinding}},
		"other volumes ignored": {Case{Nodes: nodes(a), Placements: place(on("a", 1), pod("p1", "x", "1", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}))}, nil},
		// Attach limits: unbound claims count under their class's provisioner, one
		// volume each however many pods share it.
		"attach limit": {Case{Nodes: nodes(a), Storage: limited(stock, csiNode("a", ebs, 3)), Placements: place(on("a", 4),
			pod("p1", "x", "100m", withClaims("wait-1")), pod("p2", "x", "100m", withClaims("wait-2")), pod("p3", "x", "100m", withClaims("data-1a")), pod("p4", "x", "100m", withClaims("wait-4")))}, []Rule{RuleVolumeLimits}},
		"attach limit, shared claim": {Case{Nodes: nodes(a), Storage: limited(stock, csiNode("a", ebs, 3)), Placements: place(on("a", 4),
			pod("p1", "x", "100m", withClaims("wait-1")), pod("p2", "x", "100m", withClaims("wait-2")), pod("p3", "x", "100m", withClaims("wait-3")), pod("p4", "x", "100m", withClaims("wait-1", "wait-2")))}, nil},
		"attach limit, one pod": {Case{Nodes: nodes(a), Storage: limited(stock, csiNode("a", ebs, 3)), Placements: place(on("a", 1),
			pod("p1", "x", "100m", withClaims("wait-1", "wait-2", "wait-3", "wait-4")))}, []Rule{RuleVolumeLimits}},
		"attach limit, other driver": {Case{Nodes: nodes(a), Storage: limited(stock, csiNode("a", "efs.csi.aws.com", 1)), Placements: place(on("a", 1),
			pod("p1", "x", "100m", withClaims("wait-1", "wait-2", "wait-3", "wait-4")))}, nil},
		"attach limit, bound pods count": {Case{Nodes: []Node{withPods(Node{Node: a}, pod("old", "x", "100m", withClaims("wait-1", "wait-2", "wait-3")))},
			Storage: limited(stock, csiNode("a", ebs, 3)), Placements: place(on("a", 1), pod("p1", "x", "100m", withClaims("wait-4")))}, []Rule{RuleVolumeLimits}},
		"attach limit of a new node": {Case{Nodes: []Node{{Node: a, AttachLimits: map[string]int64{ebs: 2}}}, Storage: stock, Placements: place(on("a", 3),
			pod("p1", "x", "100m", withClaims("wait-1")), pod("p2", "x", "100m", withEphemeral("scratch", "wait")), pod("p3", "x", "100m", withClaims("wait-3")))}, []Rule{RuleVolumeLimits}},
		// A node's CSINode decides over the limits given for it: a driver it gives no
		// count has none.
		"CSINode over given limits": {Case{Nodes: []Node{{Node: a, AttachLimits: map[string]int64{ebs: 1}}}, Storage: limited(stock, csiNode("a", "efs.csi.aws.com", 1)),
			Placements: place(on("a", 1), pod("p1", "x", "100m", withClaims("wait-1", "wait-2")))}, nil},
	})
}

// A decision that keeps every volume rule, then each mistake a simulation could make
// planted in it: the verifier names the rule, the pod and the node.
func TestCheckCatchesPlantedVolumeMistakes(t *testing.T) {
	st := Storage{
		Claims: []*corev1.PersistentVolumeClaim{
			claim("db-0", boundTo("pv-db-0")), claim("db-1", boundTo("pv-db-1")),
			claim("cache-0", ofClass("gp3")), claim("cache-1", ofClass("gp3")), claim("cache-2", ofClass("gp3")), claim("cache-3", ofClass("gp3")),
			claim("queue", ofClass("io2")),
		},
		Volumes:  []*corev1.PersistentVolume{volumeIn("pv-db-0", "topology.ebs.csi.aws.com/zone", "fake-1a"), volumeIn("pv-db-1", corev1.LabelTopologyZone, "fake-1b")},
		Classes:  []*storagev1.StorageClass{class("gp3", waitForConsumer, ""), class("io2", immediate, "")},
		CSINodes: []*storagev1.CSINode{csiNode("old-1a", ebs, 3)},
	}
	nodesOf := func() []Node {
		return []Node{
			{Node: newNode("old-1a", "fake-1a", "8")},
			{Node: newNode("new-1b", "fake-1b", "8"), Pool: "p", AttachLimits: map[string]int64{ebs: 25}},
		}
	}
	good := func() []Placement {
		return []Placement{
			{Pod: pod("db-0", "db", "1", withClaims("db-0")), Node: "old-1a"},
			{Pod: pod("db-1", "db", "1", withClaims("db-1")), Node: "new-1b"},
			{Pod: pod("cache-0", "cache", "100m", withClaims("cache-0")), Node: "old-1a"},
			{Pod: pod("cache-1", "cache", "100m", withClaims("cache-1")), Node: "old-1a"},
			{Pod: pod("cache-2", "cache", "100m", withClaims("cache-2")), Node: "new-1b"},
			{Pod: pod("cache-3", "cache", "100m", withClaims("cache-3")), Node: "new-1b"},
		}
	}
	if found := Check(Case{Nodes: nodesOf(), Storage: st, Placements: good()}); len(found) != 0 {
		t.Fatalf("the good decision breaks rules: %v", found)
	}
	for name, tc := range map[string]struct {
		plant func([]Placement) []Placement
		want  Violation
	}{
		"a fake-1a volume's pod in fake-1b": {
			plant: func(ps []Placement) []Placement { ps[0].Node = "new-1b"; return ps },
			want:  Violation{Rule: RuleVolumeBinding, Pod: "default/db-0", Node: "new-1b"},
		},
		"an unbound Immediate claim's pod placed": {
			plant: func(ps []Placement) []Placement {
				return append(ps, Placement{Pod: pod("queue", "queue", "100m", withClaims("queue")), Node: "new-1b"})
			},
			want: Violation{Rule: RuleVolumeBinding, Pod: "default/queue", Node: "new-1b"},
		},
		"a fourth volume where the CSINode allows three": {
			plant: func(ps []Placement) []Placement { ps[4].Node = "old-1a"; return ps },
			want:  Violation{Rule: RuleVolumeLimits, Pod: "default/cache-2", Node: "old-1a"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			found := Check(Case{Nodes: nodesOf(), Storage: st, Placements: tc.plant(good())})
			if len(found) != 1 || found[0].Rule != tc.want.Rule || found[0].Pod != tc.want.Pod || found[0].Node != tc.want.Node {
				t.Fatalf("found %v, want only %s for %s on %s", found, tc.want.Rule, tc.want.Pod, tc.want.Node)
			}
		})
	}
}

func TestAdmittingVolumes(t *testing.T) {
	c := Case{
		Nodes: []Node{{Node: newNode("a", "fake-1a", "4")}, {Node: newNode("b", "fake-1b", "4"), AttachLimits: map[string]int64{ebs: 1}}},
		Storage: Storage{
			Claims:  []*corev1.PersistentVolumeClaim{claim("data", boundTo("pv-1b")), claim("now", ofClass("now")), claim("later", ofClass("wait"))},
			Volumes: []*corev1.PersistentVolume{volumeIn("pv-1b", "topology.ebs.csi.aws.com/zone", "fake-1b")},
			Classes: []*storagev1.StorageClass{class("now", immediate, ""), class("wait", waitForConsumer, "")},
		},
		Placements: place([]string{"b"}, pod("p1", "x", "100m", withClaims("data"))),
	}
	got := Admitting(c, []*corev1.Pod{
		pod("same", "x", "100m", withClaims("data")), pod("now", "x", "100m", withClaims("now")), pod("later", "x", "100m", withClaims("later")),
	})
	want := [][]string{{"b"}, nil, {"a"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admitting %v, want %v", got, want)
	}
}
