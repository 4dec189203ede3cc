package v1beta1

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The keys the CRD's schema allows in a requirement are RequirementKeys, and its rules
// about numbers name exactly NumericInstanceLabelKeys: the markers and the Go lists the
// code reads say the same.
func TestRequirementSchemaMatchesTheWellKnownKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "stratos.sh_nodepools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	template := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["template"]
	requirement := template.Properties["spec"].Properties["requirements"].Items.Schema
	var keys []string
	for _, v := range requirement.Properties["key"].Enum {
		keys = append(keys, strings.Trim(string(v.Raw), `"`))
	}
	if !slices.Equal(keys, RequirementKeys) {
		t.Errorf("the schema allows keys %v; RequirementKeys are %v", keys, RequirementKeys)
	}
	numericRules := 0
	for _, rule := range requirement.XValidations {
		if !strings.Contains(rule.Rule, LabelInstanceCPU) {
			continue
		}
		numericRules++
		for _, key := range InstanceLabelKeys {
			if named, numeric := strings.Contains(rule.Rule, "'"+key+"'"), slices.Contains(NumericInstanceLabelKeys, key); named != numeric {
				t.Errorf("rule %q names %s: %v; numeric: %v", rule.Rule, key, named, numeric)
			}
		}
	}
	if numericRules != 2 {
		t.Errorf("%d rules about numeric keys, want 2 (Gt and Lt only on them; their values whole numbers)", numericRules)
	}
}
