package operator

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/cloudprovider/fake"
)

// docs/metrics.md lists every stratos_ metric the operator serves, and nothing else.
func TestMetricsGuideMatchesTheServedMetrics(t *testing.T) {
	// One cloud call gives the labelled cloud metrics a series, so the registry shows them.
	cloud := cloudprovider.New(fake.New(fake.Options{}), cloudprovider.DefaultBatchWindow)
	_, _ = cloud.Get(context.Background(), "i-00000000000000000")

	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "stratos_") {
			served = append(served, f.GetName())
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile("\\| `(stratos_[a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1)
	var names []string
	for _, m := range documented {
		names = append(names, m[1])
	}
	for _, name := range served {
		if !slices.Contains(names, name) {
			t.Errorf("%s is served but not documented in docs/metrics.md", name)
		}
	}
	for _, name := range names {
		if !slices.Contains(served, name) {
			t.Errorf("docs/metrics.md documents %s, which is not served", name)
		}
	}
}
