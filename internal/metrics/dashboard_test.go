package metrics

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// dashboardFile is the Grafana dashboard the chart ships.
var dashboardFile = filepath.Join("..", "..", "charts", "stratos", "dashboards", "stratos.json")

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title      string          `json:"title"`
	Type       string          `json:"type"`
	Datasource *datasourceRef  `json:"datasource"`
	Targets    []panelTarget   `json:"targets"`
	Panels     []panel         `json:"panels"` // a collapsed row's
	GridPos    json.RawMessage `json:"gridPos"`
}

type panelTarget struct {
	Expr       string         `json:"expr"`
	Datasource *datasourceRef `json:"datasource"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	return d
}

// flatten lists every panel, those of collapsed rows included.
func flatten(panels []panel) []panel {
	var out []panel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// served names every metric the operator's registry serves, a histogram's or summary's
// _bucket, _sum and _count series included: Stratos's own (described, so that vectors
// with no series yet count) and those registered with controller-runtime's registry
// (gathered, once a controller has started: the Go runtime and process collectors, and
// the reconcile and work-queue vectors, which have series per started controller).
func served(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	add := func(name string, kind dto.MetricType) {
		out[name] = true
		if kind == dto.MetricType_HISTOGRAM || kind == dto.MetricType_SUMMARY {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				out[name+suffix] = true
			}
		}
	}
	for _, c := range All {
		for _, name := range names([]prometheus.Collector{c}) {
			add(name, kindOf(c))
		}
	}
	for _, mf := range gatherWithAControllerStarted(t) {
		add(mf.GetName(), mf.GetType())
	}
	return out
}

// gatherWithAControllerStarted starts a controller the way the operator's manager starts
// each of its own and has it reconcile one object, so that controller-runtime's
// per-controller series (reconciles, their time, errors, the work queue's depth and wait)
// exist, and gathers controller-runtime's registry.
func gatherWithAControllerStarted(t *testing.T) []*dto.MetricFamily {
	t.Helper()
	const name = "dashboard-check"
	ctrl, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}),
		// served runs once per test; every controller after the first has the same name.
		SkipNameValidation: ptr.To(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.GenericEvent, 1)
	events <- event.GenericEvent{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}}
	if err := ctrl.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- ctrl.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("the controller stopped with %v", err)
		}
	}()
	want := []string{"controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds", "workqueue_depth", "workqueue_queue_duration_seconds"}
	var families []*dto.MetricFamily
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		var err error
		families, err = crmetrics.Registry.Gather()
		return err == nil && hasSeriesFor(families, name, want), err
	})
	if err != nil {
		t.Fatalf("controller %q reconciled, but controller-runtime's registry has no series of %v for it: %v", name, want, err)
	}
	return families
}

// hasSeriesFor tells whether every named family has a series labelled with the
// controller (controller-runtime's vectors) or its queue (the work-queue vectors).
func hasSeriesFor(families []*dto.MetricFamily, controllerName string, names []string) bool {
	labelled := func(m *dto.Metric) bool {
		return slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
			return (l.GetName() == "controller" || l.GetName() == "name") && l.GetValue() == controllerName
		})
	}
	found := 0
	for _, mf := range families {
		if slices.Contains(names, mf.GetName()) && slices.ContainsFunc(mf.GetMetric(), labelled) {
			found++
		}
	}
	return found == len(names)
}

// kindOf is the type of a Stratos collector.
func kindOf(c prometheus.Collector) dto.MetricType {
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		return dto.MetricType_HISTOGRAM
	case prometheus.Counter, *prometheus.CounterVec:
		return dto.MetricType_COUNTER
	}
	return dto.MetricType_GAUGE
}

// grafanaVariables are the variables Grafana expands in a query before Prometheus sees
// it; an interval stands in for the interval ones, so that the query parses.
var grafanaVariables = regexp.MustCompile(`\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}`)

// metricNames returns the metric names a PromQL query selects, parsed by Prometheus's
// own parser.
func metricNames(expr string) ([]string, error) {
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVariables.ReplaceAllString(expr, "5m"))
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			out = append(out, name)
		}
		return nil
	})
	return out, nil
}

// unknown lists the metrics a query selects that the registry does not serve.
func unknown(expr string, known map[string]bool) ([]string, error) {
	names, err := metricNames(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		if !known[name] {
			out = append(out, name)
		}
	}
	return out, nil
}

// Every query of every panel of the dashboard selects only metrics the operator serves.
func TestDashboardQueriesUseOnlyMetricsThatExist(t *testing.T) {
	known := served(t)
	queries := 0
	for _, p := range flatten(readDashboard(t).Panels) {
		for _, target := range p.Targets {
			queries++
			missing, err := unknown(target.Expr, known)
			if err != nil {
				t.Errorf("panel %q: query %q does not parse: %v", p.Title, target.Expr, err)
				continue
			}
			if len(missing) > 0 {
				t.Errorf("panel %q: query %q selects %v, which Stratos does not serve", p.Title, target.Expr, missing)
			}
		}
	}
	if queries == 0 {
		t.Fatal("the dashboard has no query")
	}
}

// The check finds a metric name that is wrong, a suffix its type does not have, and a
// query that does not parse; it passes the right names, histogram series and Grafana's
// interval variables.
func TestTheDashboardCheckCatchesAWrongName(t *testing.T) {
	known := served(t)
	cases := []struct {
		name    string
		expr    string
		missing []string
		bad     bool
	}{
		{name: "a counter", expr: `sum by (outcome) (rate(stratos_provisioning_decisions_total[$__rate_interval]))`},
		{name: "a histogram's buckets", expr: `histogram_quantile(0.9, sum by (le, path) (rate(stratos_pod_startup_duration_seconds_bucket{milestone="ready"}[5m])))`},
		{name: "a Go runtime metric", expr: `go_goroutines * on (job, instance) group_left (version) stratos_build_info`},
		{name: "controller-runtime's reconcile errors", expr: `sum by (controller) (rate(controller_runtime_reconcile_errors_total[5m]))`},
		{name: "a work queue's wait", expr: `histogram_quantile(0.9, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket[5m])))`},
		{name: "a planted wrong controller-runtime name", expr: `rate(controller_runtime_reconcile_error_total[5m])`, missing: []string{"controller_runtime_reconcile_error_total"}},
		{name: "a name by __name__", expr: `{__name__="stratos_nodepool_usage", nodepool=~"$nodepool"}`},
		{name: "a planted wrong name", expr: `sum(rate(stratos_provisioning_decision_total[$__range]))`, missing: []string{"stratos_provisioning_decision_total"}},
		{name: "a gauge has no buckets", expr: `stratos_nodepool_limit_bucket`, missing: []string{"stratos_nodepool_limit_bucket"}},
		{name: "one wrong name among right ones", expr: `stratos_nodepool_usage / stratos_nodepool_limits`, missing: []string{"stratos_nodepool_limits"}},
		{name: "a query that does not parse", expr: `sum(rate(stratos_aws_api_calls_total[5m])`, bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			missing, err := unknown(tc.expr, known)
			if (err != nil) != tc.bad {
				t.Fatalf("error %v, want an error: %v", err, tc.bad)
			}
			if !slices.Equal(missing, tc.missing) {
				t.Fatalf("unknown %v, want %v", missing, tc.missing)
			}
		})
	}
}

// The dashboard is one Grafana imports as it is: a current schema, a data source chosen
// by a variable that every panel and query uses, and a pool variable read from the
// pools' series.
func TestTheDashboardIsPortable(t *testing.T) {
	d := readDashboard(t)
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: Grafana 9 and later read 36 and up", d.SchemaVersion)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Name == "datasource" && v.Query != "prometheus" {
			t.Errorf("the datasource variable chooses among %v, want prometheus", v.Query)
		}
	}
	if vars["datasource"] != "datasource" || vars["nodepool"] != "query" {
		t.Errorf("variables %v, want a datasource variable and a nodepool query variable", vars)
	}
	for _, p := range flatten(d.Panels) {
		if p.Type == "row" {
			continue
		}
		if len(p.GridPos) == 0 || p.Title == "" {
			t.Errorf("panel %q has no title or position", p.Title)
		}
		refs := []*datasourceRef{p.Datasource}
		for _, target := range p.Targets {
			refs = append(refs, target.Datasource)
		}
		for _, ref := range refs {
			if ref == nil || ref.Type != "prometheus" || ref.UID != "${datasource}" {
				t.Errorf("panel %q uses data source %+v, want the ${datasource} variable", p.Title, ref)
			}
		}
		for _, target := range p.Targets {
			if strings.Contains(target.Expr, "$nodepool") && !strings.Contains(target.Expr, `nodepool=~"$nodepool"`) {
				t.Errorf("panel %q: %q must match pools with =~, as the variable may select several", p.Title, target.Expr)
			}
		}
	}
}
