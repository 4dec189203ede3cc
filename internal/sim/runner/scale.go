package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stratos-sh/stratos/internal/sim/report"
	"github.com/stratos-sh/stratos/internal/sim/scenario"
)

// decisionMetric is the operator's histogram of provisioning passes, the honest source
// of its decision time: it times the pass inside the process, whatever the simulator's
// own load.
const decisionMetric = "stratos_provisioning_duration_seconds"

// freeLoopbackAddress picks a loopback port for the operator's metrics endpoint.
func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// decisionScraper reads the operator's decision-time histogram over its restarts: a
// restarted operator starts its histogram from zero, so the buckets of each earlier
// life are kept apart and added.
type decisionScraper struct {
	url string

	mu sync.Mutex
	// earlier are the cumulative buckets of the operator's earlier lives, by upper bound;
	// current those of its current life at the last scrape.
	earlier, current map[float64]uint64
}

func newDecisionScraper(address string) *decisionScraper {
	return &decisionScraper{url: "http://" + address + "/metrics", earlier: map[float64]uint64{}, current: map[float64]uint64{}}
}

// scrape reads the histogram now; an operator down or restarting is no error, its last
// figures stay.
func (d *decisionScraper) scrape(ctx context.Context) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return
	}
	buckets := histogramBuckets(families[decisionMetric])
	d.mu.Lock()
	defer d.mu.Unlock()
	if buckets[math.Inf(1)] < d.current[math.Inf(1)] {
		for bound, n := range d.current {
			d.earlier[bound] += n
		}
	}
	d.current = buckets
}

// histogramBuckets are a histogram family's cumulative buckets by upper bound, +Inf
// included.
func histogramBuckets(family *dto.MetricFamily) map[float64]uint64 {
	buckets := map[float64]uint64{}
	if family == nil {
		return buckets
	}
	for _, m := range family.GetMetric() {
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			buckets[b.GetUpperBound()] += b.GetCumulativeCount()
		}
		// The exposition may leave the +Inf bucket out (the parser keeps it when it is
		// there): the sample count is that bucket.
		if !slices.ContainsFunc(h.GetBucket(), func(b *dto.Bucket) bool { return math.IsInf(b.GetUpperBound(), 1) }) {
			buckets[math.Inf(1)] += h.GetSampleCount()
		}
	}
	return buckets
}

// decisionTime is the decision time so far, nil before the first pass.
func (d *decisionScraper) decisionTime() *report.DecisionTime {
	d.mu.Lock()
	defer d.mu.Unlock()
	var buckets []report.Bucket
	for bound, n := range d.current {
		buckets = append(buckets, report.Bucket{UpperBound: bound, Count: n + d.earlier[bound]})
	}
	passes := d.current[math.Inf(1)] + d.earlier[math.Inf(1)]
	if passes == 0 {
		return nil
	}
	return &report.DecisionTime{Passes: passes, P50: report.BucketQuantile(0.5, buckets), P99: report.BucketQuantile(0.99, buckets)}
}

// poolStatusWrites reads, from the API server's audit log, when the operator wrote each
// NodePool's status, by pool name.
func poolStatusWrites(path string) (map[string][]time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	writes := map[string][]time.Time{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var event struct {
			Stage     string    `json:"stage"`
			Received  time.Time `json:"requestReceivedTimestamp"`
			ObjectRef struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Name        string `json:"name"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(scanner.Bytes(), &event) != nil || event.Stage != "ResponseComplete" {
			continue
		}
		if event.ObjectRef.Resource == "nodepools" && event.ObjectRef.Subresource == "status" {
			writes[event.ObjectRef.Name] = append(writes[event.ObjectRef.Name], event.Received)
		}
	}
	return writes, scanner.Err()
}

// sampleCalls records the operator's cloud calls so far, for the calls per minute.
func (r *run) sampleCalls(at time.Time) {
	calls := r.cloud.calls()
	r.mu.Lock()
	r.callSamples = append(r.callSamples, report.CallSample{At: at, Calls: calls})
	r.mu.Unlock()
}

// scaleFigures measures what Stratos wrote and asked so far, as the report's Scale.
func (r *run) scaleFigures() (report.Scale, error) {
	counts := r.observer.counters()
	writes := auditedWrites(r.opts.WorkDir + "/audit.log")
	s := report.Scale{NodesLaunchedOrStarted: counts.claimsCreated + counts.startedFromStandby}
	s.APIWritesPerNode, s.APIWritesPerNodeTotal = report.PerNode(writes, s.NodesLaunchedOrStarted)
	if s.NodesLaunchedOrStarted > 0 {
		s.EventsPerNode = float64(report.EventWrites(writes)) / float64(s.NodesLaunchedOrStarted)
	}
	pools, err := poolStatusWrites(r.opts.WorkDir + "/audit.log")
	if err != nil {
		return s, fmt.Errorf("reading the audit log: %w", err)
	}
	s.NodePoolStatusWrites = map[string]report.WriteRate{}
	for pool, at := range pools {
		s.NodePoolStatusWrites[pool] = report.Rate(at, time.Since(r.started))
	}
	r.mu.Lock()
	samples := append([]report.CallSample(nil), r.callSamples...)
	r.mu.Unlock()
	s.CloudCallsPerMinute = report.PerMinute(samples)
	return s, nil
}

// scaleFigures are what the scale counts of a condition read.
type scaleFigures struct {
	peakRSSBytes int64
	decisions    *report.DecisionTime
	scale        report.Scale
}

// scaleCounts are the counts of a condition that read scaleFigures, by name.
var scaleCounts = map[string]bool{
	"operatorPeakRSSMiB": true, "decisionP99Millis": true, "apiWritesPerNode": true, "nodePoolStatusWritesPerSecond": true,
}

// unmeasured is the value of a count with nothing to measure yet, such as the decision
// time before the first pass: no bound below it holds.
const unmeasured = math.MaxInt32

// count is the value of one scale count, rounded up so that a bound of n means at most n.
func (f scaleFigures) count(c scenario.NamedCount) int {
	if c.CloudCalls != nil {
		return f.scale.CloudCallsPerMinute[c.CloudCalls.Operation].Peak
	}
	switch c.Name {
	case "operatorPeakRSSMiB":
		return int(math.Ceil(float64(f.peakRSSBytes) / (1 << 20)))
	case "decisionP99Millis":
		if f.decisions == nil {
			return unmeasured
		}
		return int(math.Ceil(f.decisions.P99 * 1000))
	case "apiWritesPerNode":
		if f.scale.NodesLaunchedOrStarted == 0 {
			return unmeasured
		}
		return int(math.Ceil(f.scale.APIWritesPerNodeTotal))
	case "nodePoolStatusWritesPerSecond":
		busiest := 0.0
		for _, w := range f.scale.NodePoolStatusWrites {
			busiest = max(busiest, w.PeakPerSecond)
		}
		return int(math.Ceil(busiest))
	}
	panic(fmt.Sprintf("runner: %s is no scale count", c.Name))
}

// scaleFigures reads the figures now: the operator's metrics and the audit log.
func (c costly) scaleFigures() scaleFigures {
	c.r.decisions.scrape(c.ctx)
	c.r.sampleCalls(time.Now())
	s, err := c.r.scaleFigures()
	if err != nil {
		c.r.fail("measuring the scale figures: %v", err)
	}
	return scaleFigures{peakRSSBytes: c.r.operator.PeakRSS(), decisions: c.r.decisions.decisionTime(), scale: s}
}
