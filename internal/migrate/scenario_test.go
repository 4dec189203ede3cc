package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// TestScenarioMatchesMigrateOutput keeps the simulator's scenario of a migrated
// Karpenter install and migrate's output of Karpenter's getting-started objects the
// same, so that the scenario runs what migrate makes.
func TestScenarioMatchesMigrateOutput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "scenarios", "karpenter-migrated.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var scenario struct {
		Objects []map[string]any `json:"objects"`
	}
	if err := yaml.Unmarshal(data, &scenario); err != nil {
		t.Fatal(err)
	}
	res := convertFile(t, "getting-started.yaml", Options{Standby: ptr.To[int32](2)})
	var out bytes.Buffer
	if err := res.WriteYAML(&out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(documents(t, out.String()), scenario.Objects); diff != "" {
		t.Errorf("the scenario's objects are not migrate's output (-migrate +scenario):\n%s", diff)
	}
}
