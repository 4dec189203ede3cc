package runner

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

const clusterAPIScenario = `
cloud: clusterapi
objects:
  - apiVersion: stratos.sh/v1beta1
    kind: FakeNodeClass
    metadata: {name: default, labels: {team: a}}
    spec: {instanceTypes: [m5.xlarge, m5.large, no.such-type], zones: [fake-1b, fake-1a]}
  - apiVersion: stratos.sh/v1beta1
    kind: NodePool
    metadata: {name: demo}
    spec:
      template:
        spec:
          nodeClassRef: {kind: FakeNodeClass, name: default}
          requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
  - apiVersion: v1
    kind: Namespace
    metadata: {name: apps}
steps:
  - apply:
      - apiVersion: stratos.sh/v1beta1
        kind: FakeNodeClass
        metadata: {name: any}
      - apiVersion: stratos.sh/v1beta1
        kind: NodePool
        metadata: {name: later}
        spec:
          template:
            spec:
              nodeClassRef: {kind: FakeNodeClass, name: any}
`

func testClusterAPIClasses() clusterAPINodeClasses {
	return clusterAPINodeClasses{
		cluster:        v1beta1.ClusterAPIClusterReference{Namespace: "capi-sim", Name: "sim"},
		bootstrap:      v1beta1.ClusterAPITemplateReference{APIGroup: "sim.stratos.sh", Kind: "SimConfigTemplate", Name: "sim-nodes"},
		infrastructure: v1beta1.ClusterAPITemplateReference{APIGroup: "sim.stratos.sh", Kind: "SimMachineTemplate", Name: "sim-nodes"},
		version:        "v1.37.0",
		catalog:        fakecloud.DefaultCatalog(),
	}
}

func TestTranslateForClusterAPI(t *testing.T) {
	s, err := scenario.Parse([]byte(clusterAPIScenario))
	if err != nil {
		t.Fatal(err)
	}
	if err := testClusterAPIClasses().translate(s); err != nil {
		t.Fatal(err)
	}

	if kind := s.Objects[0].GetKind(); kind != "ClusterAPINodeClass" {
		t.Fatalf("objects[0] is a %s", kind)
	}
	class := decode[v1beta1.ClusterAPINodeClass](t, s.Objects[0].Object)
	spec := class.Spec
	if class.Name != "default" || class.Labels["team"] != "a" ||
		spec.Cluster.Namespace != "capi-sim" || spec.Cluster.Name != "sim" || spec.Version != "v1.37.0" ||
		spec.BootstrapTemplateRef.Kind != "SimConfigTemplate" || spec.InfrastructureTemplateRef.Kind != "SimMachineTemplate" ||
		spec.InfrastructureTemplateRef.APIGroup != "sim.stratos.sh" || spec.BootstrapTemplateRef.Name != "sim-nodes" {
		t.Errorf("ClusterAPINodeClass %+v", class)
	}
	// The catalogue's m5 sizes: 2 and 4 vCPUs, 8 and 16 GiB, 29 and 58 pods, at
	// us-east-1's on-demand prices; the class's zones in the catalogue's order.
	want := []struct {
		name, cpu, memory, pods, price string
	}{
		{"m5.large", "2", "8Gi", "29", "0.096"},
		{"m5.xlarge", "4", "16Gi", "58", "0.192"},
	}
	if len(spec.InstanceTypes) != len(want) {
		t.Fatalf("instance types %+v, want the two m5 types the class allows", spec.InstanceTypes)
	}
	for i, w := range want {
		got := spec.InstanceTypes[i]
		price, _ := strconv.ParseFloat(got.PricePerHour, 64)
		stopped, err := strconv.ParseFloat(got.StoppedPricePerHour, 64)
		if got.Name != w.name || got.Architecture != "amd64" || got.PricePerHour != w.price ||
			!got.Capacity.Cpu().Equal(resource.MustParse(w.cpu)) || !got.Capacity.Memory().Equal(resource.MustParse(w.memory)) ||
			!got.Capacity.Pods().Equal(resource.MustParse(w.pods)) ||
			len(got.Zones) != 2 || got.Zones[0] != "fake-1a" || got.Zones[1] != "fake-1b" {
			t.Errorf("instance type %d: %+v, want %+v in fake-1a and fake-1b", i, got, w)
		}
		// A stopped instance costs its 20 GiB gp3 volume, a fraction of a cent an hour.
		if err != nil || stopped <= 0 || stopped >= 0.01 || stopped >= price || len(got.StoppedPricePerHour) > 16 {
			t.Errorf("%s: stoppedPricePerHour %q, want the disk's fraction of a cent in at most 16 characters (the CRD's limit): %v", got.Name, got.StoppedPricePerHour, err)
		}
	}

	pool := decode[v1beta1.NodePool](t, s.Objects[1].Object)
	if ref := pool.Spec.Template.Spec.NodeClassRef; ref.Kind != "ClusterAPINodeClass" || ref.Name != "default" {
		t.Errorf("pool refers to %+v", ref)
	}
	if reqs := pool.Spec.Template.Spec.Requirements; len(reqs) != 1 || reqs[0].Key != "kubernetes.io/arch" {
		t.Errorf("requirements %+v, want the pool's own only", reqs)
	}
	if s.Objects[2].GetKind() != "Namespace" || len(s.Objects[2].Object) != 3 {
		t.Errorf("other objects change: %v", s.Objects[2].Object)
	}

	// A class applied by a step, allowing everything: every type of the catalogue, each
	// in the fake region's three zones.
	every := decode[v1beta1.ClusterAPINodeClass](t, s.Steps[0].Apply[0].Object)
	if len(every.Spec.InstanceTypes) != len(fakecloud.DefaultCatalog()) {
		t.Errorf("a class of every type offers %d types, want the catalogue's %d", len(every.Spec.InstanceTypes), len(fakecloud.DefaultCatalog()))
	}
	for _, it := range every.Spec.InstanceTypes {
		if len(it.Zones) != 3 || it.PricePerHour == "" {
			t.Errorf("instance type %+v, want the three zones and a price", it)
		}
		if it.Name == "m6g.large" && it.Architecture != "arm64" {
			t.Errorf("m6g.large is %s, want arm64", it.Architecture)
		}
	}
	if later := decode[v1beta1.NodePool](t, s.Steps[0].Apply[1].Object); later.Spec.Template.Spec.NodeClassRef.Kind != "ClusterAPINodeClass" {
		t.Errorf("a pool applied by a step refers to %+v", later.Spec.Template.Spec.NodeClassRef)
	}
}

func TestTranslateForClusterAPIRefusesAClassWithNothingOffered(t *testing.T) {
	s, err := scenario.Parse([]byte(`cloud: clusterapi
objects:
  - {apiVersion: stratos.sh/v1beta1, kind: FakeNodeClass, metadata: {name: none}, spec: {zones: [mars-1a]}}
steps:
  - sleep: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := testClusterAPIClasses().translate(s); err == nil {
		t.Error("a class whose zones the catalogue does not offer translated without an error")
	}
}

func TestDecimalPrices(t *testing.T) {
	for price, want := range map[float64]string{0.096: "0.096", 0.0021917808219178085: "0.00219178", 4.608: "4.608", 2: "2", 0: "0"} {
		if got := decimal(price); got != want {
			t.Errorf("decimal(%v) = %q, want %q", price, got, want)
		}
	}
}
