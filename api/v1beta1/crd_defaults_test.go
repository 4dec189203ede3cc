package v1beta1

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// saysWhatUnsetMeans matches a description that documents the default of an optional field.
var saysWhatUnsetMeans = regexp.MustCompile(`(?i)default|unset|empty`)

// Every optional field of every spec has a documented default: a schema default, or a
// description that says what leaving it out means. docs/api.md is generated from these.
func TestEveryOptionalSpecFieldDocumentsItsDefault(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatal(err)
		}
		root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		checkDefaults(t, crd.Spec.Names.Kind+".spec", root.Properties["spec"], slices.Contains(root.Required, "spec"))
	}
}

func checkDefaults(t *testing.T, path string, s apiextensionsv1.JSONSchemaProps, required bool) {
	t.Helper()
	if !required && s.Default == nil && !saysWhatUnsetMeans.MatchString(s.Description) {
		t.Errorf("%s is optional but neither has a default nor says what unset means: %q", path, s.Description)
	}
	children, childRequired := s.Properties, s.Required
	if s.Items != nil && s.Items.Schema != nil {
		children, childRequired, path = s.Items.Schema.Properties, s.Items.Schema.Required, path+"[]"
	}
	for name, child := range children {
		checkDefaults(t, path+"."+name, child, slices.Contains(childRequired, name))
	}
}
