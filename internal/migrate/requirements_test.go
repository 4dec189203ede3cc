package migrate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// poolWith converts a pool of one requirement, written as YAML flow, and returns the
// pool and the report entries of its requirements.
func poolWith(t *testing.T, requirement string) (*v1beta1.NodePool, []Entry) {
	t.Helper()
	manifest := fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: c}
      requirements: [%s]
`, requirement)
	objects, err := Decode(bytes.NewBufferString(manifest), "test")
	if err != nil {
		t.Fatal(err)
	}
	res := Convert(objects, Options{})
	if len(res.NodePools) != 1 {
		t.Fatalf("the pool was not converted: %+v", res.Report.Entries)
	}
	// Every pool's notes on its budgets and its class are tested elsewhere.
	var entries []Entry
	for _, e := range res.Report.Entries {
		if strings.HasPrefix(e.Field, "spec.template.spec.requirements") {
			entries = append(entries, e)
		}
	}
	return &res.NodePools[0], entries
}

// TestRequirementKeys checks the mapping table of docs/migrating.md, key by key: the
// Stratos key each Karpenter key becomes, or none.
func TestRequirementKeys(t *testing.T) {
	cases := map[string]string{
		"karpenter.sh/capacity-type":                   "stratos.sh/capacity-type",
		"karpenter.k8s.aws/instance-family":            "stratos.sh/instance-family",
		"karpenter.k8s.aws/instance-category":          "stratos.sh/instance-category",
		"karpenter.k8s.aws/instance-generation":        "stratos.sh/instance-generation",
		"karpenter.k8s.aws/instance-size":              "stratos.sh/instance-size",
		"karpenter.k8s.aws/instance-cpu":               "stratos.sh/instance-cpu",
		"karpenter.k8s.aws/instance-memory":            "stratos.sh/instance-memory",
		"karpenter.k8s.aws/instance-gpu-count":         "stratos.sh/instance-gpu-count",
		"karpenter.k8s.aws/instance-gpu-name":          "stratos.sh/instance-gpu-name",
		"karpenter.k8s.aws/instance-hypervisor":        "stratos.sh/instance-hypervisor",
		"karpenter.k8s.aws/instance-network-bandwidth": "stratos.sh/instance-network-bandwidth",
		"node.kubernetes.io/instance-type":             "node.kubernetes.io/instance-type",
		"beta.kubernetes.io/instance-type":             "node.kubernetes.io/instance-type",
		"topology.kubernetes.io/zone":                  "topology.kubernetes.io/zone",
		"failure-domain.beta.kubernetes.io/zone":       "topology.kubernetes.io/zone",
		"kubernetes.io/arch":                           "kubernetes.io/arch",
		"kubernetes.io/os":                             "kubernetes.io/os",
		"karpenter.k8s.aws/instance-local-nvme":        "",
		"karpenter.k8s.aws/instance-ebs-bandwidth":     "",
		"karpenter.k8s.aws/instance-gpu-manufacturer":  "",
		"karpenter.k8s.aws/some-future-label":          "",
		"topology.kubernetes.io/region":                "",
		"topology.k8s.aws/zone-id":                     "",
		"karpenter.sh/nodepool":                        "",
	}
	values := map[string]string{
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "karpenter.sh/capacity-type": "spot",
		"karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-cpu": "4", "karpenter.k8s.aws/instance-memory": "8192",
		"karpenter.k8s.aws/instance-gpu-count": "1", "karpenter.k8s.aws/instance-network-bandwidth": "750",
	}
	for karpenter, stratos := range cases {
		t.Run(karpenter, func(t *testing.T) {
			value := values[karpenter]
			if value == "" {
				value = "x1"
			}
			pool, report := poolWith(t, fmt.Sprintf("{key: %q, operator: In, values: [%q]}", karpenter, value))
			got := pool.Spec.Template.Spec.Requirements
			if stratos == "" {
				if len(got) != 0 {
					t.Fatalf("want no requirement, got %+v", got)
				}
				if len(report) != 1 || report[0].Outcome != Unmapped {
					t.Fatalf("want one unmapped entry, got %+v", report)
				}
				return
			}
			if len(got) != 1 || got[0].Key != stratos || got[0].Values[0] != value {
				t.Fatalf("want %s In [%s], got %+v", stratos, value, got)
			}
			renamed := karpenter != stratos
			if hasChanged := len(report) == 1 && report[0].Outcome == Changed; hasChanged != renamed {
				t.Fatalf("a rename should be reported as changed, and only a rename: %+v", report)
			}
		})
	}
}

// TestRequirementValues checks what becomes of values and operators Stratos treats
// differently.
func TestRequirementValues(t *testing.T) {
	cases := []struct {
		name, requirement string
		want              []v1beta1.NodeSelectorRequirement
		labels            map[string]v1beta1.LabelValue
		outcomes          []Outcome
	}{
		{
			name:        "Gte is Gt of the number below",
			requirement: "{key: karpenter.k8s.aws/instance-cpu, operator: Gte, values: ['4']}",
			want:        []v1beta1.NodeSelectorRequirement{{Key: "stratos.sh/instance-cpu", Operator: "Gt", Values: []string{"3"}}},
			outcomes:    []Outcome{Changed, Changed},
		},
		{
			name:        "Lte is Lt of the number above",
			requirement: "{key: karpenter.k8s.aws/instance-generation, operator: Lte, values: ['6']}",
			want:        []v1beta1.NodeSelectorRequirement{{Key: "stratos.sh/instance-generation", Operator: "Lt", Values: []string{"7"}}},
			outcomes:    []Outcome{Changed, Changed},
		},
		{
			name:        "reserved capacity only becomes on-demand",
			requirement: "{key: karpenter.sh/capacity-type, operator: In, values: [reserved]}",
			want:        []v1beta1.NodeSelectorRequirement{{Key: "stratos.sh/capacity-type", Operator: "In", Values: []string{"on-demand"}}},
			outcomes:    []Outcome{Changed, Unmapped, Changed},
		},
		{
			name:        "NotIn reserved only says nothing Stratos needs",
			requirement: "{key: karpenter.sh/capacity-type, operator: NotIn, values: [reserved]}",
			outcomes:    []Outcome{Changed, Unmapped, Unmapped},
		},
		{
			name:        "Gt on a key that is not a number is left out",
			requirement: "{key: karpenter.k8s.aws/instance-size, operator: Gt, values: ['2']}",
			outcomes:    []Outcome{Changed, Unmapped},
		},
		{
			name:        "Windows is left out of an OS requirement",
			requirement: "{key: kubernetes.io/os, operator: In, values: [linux, windows]}",
			want:        []v1beta1.NodeSelectorRequirement{{Key: "kubernetes.io/os", Operator: "In", Values: []string{"linux"}}},
			outcomes:    []Outcome{Unmapped},
		},
		{
			name:        "duplicate values are written once, as Stratos's set requires",
			requirement: "{key: kubernetes.io/arch, operator: In, values: [arm64, arm64]}",
			want:        []v1beta1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: "In", Values: []string{"arm64"}}},
		},
		{
			name:        "a custom label with In and one value is a template label",
			requirement: "{key: example.com/team, operator: In, values: [a]}",
			labels:      map[string]v1beta1.LabelValue{"example.com/team": "a"},
			outcomes:    []Outcome{Changed},
		},
		{
			name:        "a custom label under stratos.sh is refused",
			requirement: "{key: stratos.sh/team, operator: In, values: [a]}",
			outcomes:    []Outcome{Unmapped},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, report := poolWith(t, tc.requirement)
			if diff := cmp.Diff(tc.want, pool.Spec.Template.Spec.Requirements); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.labels, pool.Spec.Template.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			var got []Outcome
			for _, e := range report {
				got = append(got, e.Outcome)
			}
			if diff := cmp.Diff(tc.outcomes, got); diff != "" {
				t.Errorf("report outcomes (-want +got):\n%s\n%+v", diff, report)
			}
		})
	}
}
