package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// The metrics table renders: every row has the header's four cells, so that no `|` in a
// cell (even inside backticks, which GitHub's tables do not protect) splits it.
func TestMetricsTableRowsHaveFourCells(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	unescapedPipe := regexp.MustCompile(`(^|[^\\])\|`)
	rows := 0
	for i, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		rows++
		// A row of n cells has n+1 unescaped pipes; "||" counts twice.
		pipes := len(unescapedPipe.FindAllString(strings.ReplaceAll(line, "||", "| |"), -1))
		if pipes != 5 {
			t.Errorf("docs/metrics.md line %d has %d cells, want 4: %s", i+1, pipes-1, line)
		}
	}
	if rows < 3 {
		t.Fatalf("found %d table rows", rows)
	}
}
