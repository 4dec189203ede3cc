package runner

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

const fakeScenario = `
cloud: aws
objects:
  - apiVersion: stratos.sh/v1beta1
    kind: FakeNodeClass
    metadata: {name: default, labels: {team: a}}
    spec: {instanceTypes: [m5.large, m5.xlarge], hibernate: true}
  - apiVersion: stratos.sh/v1beta1
    kind: FakeNodeClass
    metadata: {name: any, annotations: {sim.stratos.sh/ami-alias: bottlerocket@latest}}
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
        kind: NodePool
        metadata: {name: later}
        spec:
          template:
            spec:
              nodeClassRef: {kind: FakeNodeClass, name: any}
`

func decode[T any](t *testing.T, obj map[string]any) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, out, true); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTranslateForAWS(t *testing.T) {
	s, err := scenario.Parse([]byte(fakeScenario))
	if err != nil {
		t.Fatal(err)
	}
	classes := ec2NodeClasses{discoveryTags: map[string]string{"stratos.sh/discovery": "sim"}, role: "sim-node"}
	if err := classes.translate(s); err != nil {
		t.Fatal(err)
	}

	if kind := s.Objects[0].GetKind(); kind != "EC2NodeClass" {
		t.Fatalf("objects[0] is a %s", kind)
	}
	class := decode[v1beta1.EC2NodeClass](t, s.Objects[0].Object)
	if class.Name != "default" || class.Labels["team"] != "a" || class.Spec.Role != "sim-node" || !class.Spec.Hibernate ||
		len(class.Spec.AMISelectorTerms) != 1 || class.Spec.AMISelectorTerms[0].Alias != "al2023@latest" ||
		len(class.Spec.SubnetSelectorTerms) != 1 || class.Spec.SubnetSelectorTerms[0].Tags["stratos.sh/discovery"] != "sim" ||
		len(class.Spec.SecurityGroupSelectorTerms) != 1 || class.Spec.SecurityGroupSelectorTerms[0].Tags["stratos.sh/discovery"] != "sim" {
		t.Errorf("EC2NodeClass %+v", class)
	}
	if other := decode[v1beta1.EC2NodeClass](t, s.Objects[1].Object); other.Name != "any" || other.Spec.Hibernate ||
		len(other.Spec.AMISelectorTerms) != 1 || other.Spec.AMISelectorTerms[0].Alias != "bottlerocket@latest" {
		t.Errorf("EC2NodeClass %+v", other)
	}

	pool := decode[v1beta1.NodePool](t, s.Objects[2].Object)
	if ref := pool.Spec.Template.Spec.NodeClassRef; ref.Kind != "EC2NodeClass" || ref.Name != "default" {
		t.Errorf("pool refers to %+v", ref)
	}
	reqs, _ := json.Marshal(pool.Spec.Template.Spec.Requirements)
	want := `[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]},{"key":"node.kubernetes.io/instance-type","operator":"In","values":["m5.large","m5.xlarge"]}]`
	if string(reqs) != want {
		t.Errorf("requirements %s, want the pool's and the class's instance types: %s", reqs, want)
	}
	if s.Objects[3].GetKind() != "Namespace" || len(s.Objects[3].Object) != 3 {
		t.Errorf("other objects change: %v", s.Objects[3].Object)
	}

	later := decode[v1beta1.NodePool](t, s.Steps[0].Apply[0].Object)
	if later.Spec.Template.Spec.NodeClassRef.Kind != "EC2NodeClass" || len(later.Spec.Template.Spec.Requirements) != 0 {
		t.Errorf("a pool applied by a step, of a class with every type: %+v", later.Spec.Template)
	}
}
