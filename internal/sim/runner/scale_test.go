package runner

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"k8s.io/utils/ptr"

	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

func TestScaleCountsRoundUpSoThatABoundIsAnAtMost(t *testing.T) {
	v := &view{costly: fixedCounts{scale: scaleFigures{
		peakRSSBytes: 299<<20 + 1, // a byte over 299 MiB
		decisions:    &report.DecisionTime{Passes: 40, P50: 0.02, P99: 0.9991},
		scale: report.Scale{
			NodesLaunchedOrStarted: 500, APIWritesPerNodeTotal: 15.0,
			NodePoolStatusWrites: map[string]report.WriteRate{"a": {PeakPerSecond: 0.4}, "b": {PeakPerSecond: 1.1}},
			CloudCallsPerMinute:  map[string]report.MinuteRate{"List": {Peak: 61, Mean: 30}},
		},
	}}}
	cases := []struct {
		name string
		c    scenario.Condition
		ok   bool
		why  string
	}{
		{"memory", scenario.Condition{ScaleCounts: scenario.ScaleCounts{OperatorPeakRSSMiB: &scenario.Count{AtMost: ptr.To(299)}}}, false, "operatorPeakRSSMiB is 300, want ≤ 299"},
		{"decision time", scenario.Condition{ScaleCounts: scenario.ScaleCounts{DecisionP99Millis: &scenario.Count{AtMost: ptr.To(999)}}}, false, "decisionP99Millis is 1000, want ≤ 999"},
		{"writes per node", scenario.Condition{ScaleCounts: scenario.ScaleCounts{APIWritesPerNode: &scenario.Count{AtMost: ptr.To(15)}}}, true, ""},
		{"the busiest pool", scenario.Condition{ScaleCounts: scenario.ScaleCounts{NodePoolStatusWritesPerSecond: &scenario.Count{AtMost: ptr.To(1)}}}, false, "nodePoolStatusWritesPerSecond is 2, want ≤ 1"},
		{"calls per minute", scenario.Condition{ScaleCounts: scenario.ScaleCounts{CloudCallsPerMinute: []scenario.OperationCount{
			{Operation: "List", Count: scenario.Count{AtMost: ptr.To(60)}}, {Operation: "Get", Count: scenario.Count{AtMost: ptr.To(0)}},
		}}}, false, "List calls in the busiest minute is 61, want ≤ 60"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok, why := holds(&c.c, v)
			if ok != c.ok || why != c.why {
				t.Errorf("holds = %v, %q; want %v, %q", ok, why, c.ok, c.why)
			}
		})
	}
	// No pass measured and no node yet: no bound holds.
	empty := &view{costly: fixedCounts{}}
	for _, c := range []scenario.Condition{
		{ScaleCounts: scenario.ScaleCounts{DecisionP99Millis: &scenario.Count{AtMost: ptr.To(999)}}},
		{ScaleCounts: scenario.ScaleCounts{APIWritesPerNode: &scenario.Count{AtMost: ptr.To(15)}}},
	} {
		if ok, _ := holds(&c, empty); ok {
			t.Errorf("%s holds with nothing measured", describeCondition(&c))
		}
	}
}

func TestHistogramBucketsCountTheInfBucketOnce(t *testing.T) {
	exposition := `# TYPE stratos_provisioning_duration_seconds histogram
stratos_provisioning_duration_seconds_bucket{le="0.001"} 2
stratos_provisioning_duration_seconds_bucket{le="0.002"} 6
stratos_provisioning_duration_seconds_bucket{le="+Inf"} 10
stratos_provisioning_duration_seconds_sum 0.5
stratos_provisioning_duration_seconds_count 10
`
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	buckets := histogramBuckets(families[decisionMetric])
	if buckets[0.001] != 2 || buckets[0.002] != 6 || buckets[math.Inf(1)] != 10 || len(buckets) != 3 {
		t.Errorf("buckets = %v, want 0.001: 2, 0.002: 6, +Inf: 10", buckets)
	}
}
