package explain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The operator's packages register every metric it serves, as in the binary.
	_ "github.com/stratos-sh/stratos/internal/operator"
)

const troubleshooting = "../../docs/troubleshooting.md"

// kubernetesReasons are reasons the guide names that Kubernetes records, not Stratos:
// kube-scheduler's PodScheduled reason and its Event.
var kubernetesReasons = map[string]bool{corev1.PodReasonUnschedulable: true, "FailedScheduling": true}

// stringLiterals returns every string literal in the non-test Go files under dirs: the
// reasons Stratos records are among them, wherever they are declared.
func stringLiterals(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out[s] = true
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// labelled returns the backticked names of the paragraphs that start with label.
func labelled(doc, label string) [][]string {
	var out [][]string
	for _, para := range strings.Split(doc, "\n\n") {
		if !strings.HasPrefix(para, label) {
			continue
		}
		var names []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(para, -1) {
			names = append(names, m[1])
		}
		out = append(out, names)
	}
	return out
}

// Every reason docs/troubleshooting.md tells a reader to look for is one Stratos's code
// records (a string in its source), or Kubernetes's own.
func TestTroubleshootingReasonsExistInTheCode(t *testing.T) {
	doc, err := os.ReadFile(troubleshooting)
	if err != nil {
		t.Fatal(err)
	}
	literals := stringLiterals(t, "../../internal", "../../api")
	sections := labelled(string(doc), "**Reasons:**")
	if len(sections) < 7 {
		t.Fatalf("%d Reasons lines, want one per symptom", len(sections))
	}
	for _, names := range sections {
		for _, reason := range names {
			if !literals[reason] && !kubernetesReasons[reason] {
				t.Errorf("the guide names reason %q, which no code records", reason)
			}
		}
	}
	if literals["NoNodePoolFitsTypo"] {
		t.Fatal("the literal scan finds what is not there")
	}
}

// Every metric docs/troubleshooting.md names is one the operator registers.
func TestTroubleshootingMetricsAreServed(t *testing.T) {
	doc, err := os.ReadFile(troubleshooting)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	descs := make(chan *prometheus.Desc)
	go func() {
		crmetrics.Registry.(prometheus.Collector).Describe(descs)
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			served[m[1]] = true
		}
	}
	metricName := regexp.MustCompile(`^(stratos|controller_runtime|workqueue|rest_client)_[a-z_]+$`)
	checked := 0
	for _, names := range labelled(string(doc), "**Metrics:**") {
		for _, name := range names {
			if !metricName.MatchString(name) {
				continue // a label value or a selector
			}
			checked++
			if !served[name] {
				t.Errorf("the guide names metric %s, which the operator does not serve", name)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d metric names; the Metrics lines were not read", checked)
	}
}
