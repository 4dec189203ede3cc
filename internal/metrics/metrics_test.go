package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// names returns the metric names the collectors describe.
func names(collectors []prometheus.Collector) []string {
	descs := make(chan *prometheus.Desc, 100)
	go func() {
		for _, c := range collectors {
			c.Describe(descs)
		}
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var out []string
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

// docs/metrics.md lists every metric Stratos serves, and nothing else.
func TestMetricsGuideListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("\\| `(stratos_[a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	served := names(All)
	if !slices.Equal(served, documented) {
		t.Fatalf("docs/metrics.md documents %v\nbut Stratos serves %v", documented, served)
	}
}
