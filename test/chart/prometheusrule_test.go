package chart_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"

	// The operator's packages, imported as the binary imports them, register every
	// metric it serves with controller-runtime's registry.
	_ "github.com/stratos-sh/stratos/internal/operator"
)

// prometheusOwn are the series Prometheus makes of each scrape itself; an alert on the
// operator being down can only select those.
var prometheusOwn = []string{"up"}

// servedMetrics names every metric registered with the registry the operator serves on
// /metrics, read from the registry itself: each collector describes its metrics,
// vectors with no series yet included.
func servedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	descs := make(chan *prometheus.Desc)
	go func() {
		crmetrics.Registry.(prometheus.Collector).Describe(descs)
		close(descs)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	out := map[string]bool{}
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			out[m[1]] = true
		}
	}
	if len(out) < 50 || !out["stratos_build_info"] || !out["controller_runtime_reconcile_total"] {
		t.Fatalf("the registry describes %d metrics, without Stratos's or controller-runtime's", len(out))
	}
	return out
}

// selectedMetrics names the metrics a PromQL expression selects, by Prometheus's parser.
func selectedMetrics(expr string) ([]string, error) {
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		for _, m := range vs.LabelMatchers {
			if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
				name = m.Value
			}
		}
		out = append(out, name)
		return nil
	})
	return out, nil
}

// ruleGroups reads the rendered PrometheusRule's groups with Prometheus's own rule file
// parser, which checks each expression, duration, label and annotation template.
func ruleGroups(t *testing.T, rule *unstructured.Unstructured) *rulefmt.RuleGroups {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(rule.Object, "spec")
	data, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(data, false, model.UTF8Validation, parser.NewParser(parser.Options{}))
	if len(errs) > 0 {
		t.Fatalf("the PrometheusRule's groups do not load in Prometheus: %v\n%s", errs, data)
	}
	return groups
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown file:
// lower case, spaces as hyphens, punctuation dropped.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if title, ok := strings.CutPrefix(line, "## "); ok {
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")] = true
		}
	}
	return out
}

// The chart renders no PrometheusRule unless asked to.
func TestPrometheusRuleIsOffByDefault(t *testing.T) {
	if rules := ofKind(render(t, minimal(t)), "PrometheusRule"); len(rules) != 0 {
		t.Fatalf("the default values render %d PrometheusRules", len(rules))
	}
}

// With prometheusRule.enabled, every alert loads in Prometheus and selects only metrics
// the operator serves (or Prometheus's own up); the operator-down alert watches the
// ServiceMonitor's job when the chart makes one; disabled alerts are left out, and
// alertLabels and extraRules are added.
func TestPrometheusRuleAlertsOnServedMetrics(t *testing.T) {
	served := servedMetrics(t)
	anchors := headingAnchors(t, repoPath(t, "docs", "troubleshooting.md"))
	for _, monitor := range []bool{true, false} {
		name := "without a ServiceMonitor"
		if monitor {
			name = "with a ServiceMonitor"
		}
		t.Run(name, func(t *testing.T) {
			objects := render(t, valuesFile(t, map[string]any{
				"settings":       map[string]any{"clusterName": "prod-eu-1"},
				"serviceMonitor": map[string]any{"enabled": monitor},
				"prometheusRule": map[string]any{
					"enabled": true, "labels": map[string]any{"release": "kube-prometheus-stack"},
					"alertLabels": map[string]any{"team": "platform"}, "disabled": []any{"StratosDrainsAbandoned"},
					"extraRules": []any{map[string]any{"record": "stratos:standby_nodes:sum", "expr": "sum by (nodepool) (stratos_nodepool_standby_nodes)"}},
				},
			}))
			rules := ofKind(objects, "PrometheusRule")
			if len(rules) != 1 || rules[0].GetNamespace() != releaseNamespace || rules[0].GetLabels()["release"] != "kube-prometheus-stack" {
				t.Fatalf("PrometheusRules %v, want one in %s with the values' labels", kinds(rules), releaseNamespace)
			}
			var alerts []string
			recorded := false
			for _, g := range ruleGroups(t, rules[0]).Groups {
				for _, r := range g.Rules {
					names, err := selectedMetrics(r.Expr)
					if err != nil {
						t.Fatalf("%s%s: %v", r.Alert, r.Record, err)
					}
					if len(names) == 0 {
						t.Errorf("%s: %q selects no metric", r.Alert, r.Expr)
					}
					for _, n := range names {
						if !served[n] && !slices.Contains(prometheusOwn, n) {
							t.Errorf("%s: %q selects %s, which the operator does not serve", r.Alert+r.Record, r.Expr, n)
						}
					}
					if r.Record != "" {
						recorded = true
						continue
					}
					alerts = append(alerts, r.Alert)
					if r.Labels["severity"] == "" || r.Labels["team"] != "platform" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
						t.Errorf("%s: labels %v, annotations %v; want a severity, the alertLabels, a summary and a description", r.Alert, r.Labels, r.Annotations)
					}
					if url := r.Annotations["runbook_url"]; url != "" {
						if _, anchor, _ := strings.Cut(url, "#"); !anchors[anchor] {
							t.Errorf("%s: runbook %s names no section of docs/troubleshooting.md", r.Alert, url)
						}
					}
					if r.Alert == "StratosOperatorDown" {
						want := `absent(stratos_build_info)`
						if monitor {
							want = `absent(up{job="stratos-metrics", namespace="stratos"} == 1)`
						}
						if strings.TrimSpace(r.Expr) != want {
							t.Errorf("StratosOperatorDown: %q, want %q", r.Expr, want)
						}
					}
				}
			}
			for _, want := range []string{"StratosOperatorDown", "StratosWarmPoolBelowTarget", "StratosNodePoolDegraded", "StratosCloudCallsFailing",
				"StratosCloudUnauthorized", "StratosInterruptionQueueFailing", "StratosNodeClaimsTimingOut", "StratosDrainStuck", "StratosProvisioningFailing", "StratosReconcileErrors", "StratosControllerPanics"} {
				if !slices.Contains(alerts, want) {
					t.Errorf("no alert %s among %v", want, alerts)
				}
			}
			if slices.Contains(alerts, "StratosDrainsAbandoned") {
				t.Error("StratosDrainsAbandoned is rendered though disabled")
			}
			if !recorded {
				t.Error("the extra recording rule is not rendered")
			}
		})
	}
}

// The checker itself: it finds every name an expression selects, however written, and
// flags one the operator does not serve.
func TestSelectedMetricsFindsEveryName(t *testing.T) {
	got, err := selectedMetrics(`sum(rate(a_total{x="1"}[5m])) / on() group_left {__name__="b"} > absent(c)`)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a_total", "b", "c"}) {
		t.Fatalf("selected %v, want a_total, b and c", got)
	}
	if servedMetrics(t)["stratos_nodepool_standby_nodes_typo"] {
		t.Fatal("a misspelt name counts as served")
	}
}
