package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Scale holds the figures that show whether what Stratos writes and asks grows with the
// cluster: API writes and Events per node, NodePool status writes per second, and cloud
// calls per minute.
type Scale struct {
	// NodesLaunchedOrStarted is the denominator of the per-node figures: the NodeClaims
	// created during the run (cold or for the warm pool) plus the standby claims started.
	NodesLaunchedOrStarted int `json:"nodesLaunchedOrStarted"`
	// APIWritesPerNode is the operator's API writes (Report.APIWrites) over
	// NodesLaunchedOrStarted, by "verb resource"; APIWritesPerNodeTotal sums them.
	APIWritesPerNode      map[string]float64 `json:"apiWritesPerNode"`
	APIWritesPerNodeTotal float64            `json:"apiWritesPerNodeTotal"`
	// EventsPerNode is the Events the operator created or updated over
	// NodesLaunchedOrStarted.
	EventsPerNode float64 `json:"eventsPerNode"`
	// NodePoolStatusWrites are the writes of each NodePool's status, by pool name.
	NodePoolStatusWrites map[string]WriteRate `json:"nodePoolStatusWrites"`
	// CloudCallsPerMinute are the operator's cloud calls per minute of wall time (the
	// operator's clock, whatever the time scale), by operation as Report.CloudCalls.
	CloudCallsPerMinute map[string]MinuteRate `json:"cloudCallsPerMinute"`
}

// WriteRate is how often one object was written, in wall time.
type WriteRate struct {
	Count int `json:"count"`
	// PeakPerSecond is the writes of the busiest PeakWindow over its length in seconds:
	// a window of several seconds, so that two writes a moment apart in a pool written
	// once a second do not read as two a second.
	PeakPerSecond float64 `json:"peakPerSecond"`
	// MeanPerSecond is Count over the run.
	MeanPerSecond float64 `json:"meanPerSecond"`
}

// PeakWindow is the window PeakPerSecond counts the busiest writes in.
const PeakWindow = 10 * time.Second

// MinuteRate is an operation's calls per minute: in the busiest minute and on average.
type MinuteRate struct {
	Peak int     `json:"peak"`
	Mean float64 `json:"mean"`
}

// PerNode divides each count by nodes; the total is the sum of the quotients. No node:
// no figure, rather than a division by zero.
func PerNode(counts map[string]int, nodes int) (map[string]float64, float64) {
	per := make(map[string]float64, len(counts))
	if nodes <= 0 {
		return per, 0
	}
	total := 0
	for key, n := range counts {
		per[key] = float64(n) / float64(nodes)
		total += n
	}
	return per, float64(total) / float64(nodes)
}

// EventWrites sums the writes of Events (core or events.k8s.io: both are the resource
// "events") in counts keyed "verb resource".
func EventWrites(counts map[string]int) int {
	n := 0
	for key, count := range counts {
		if _, resource, ok := strings.Cut(key, " "); ok && resource == "events" {
			n += count
		}
	}
	return n
}

// Rate measures writes at the moments at over a run of length run: the busiest
// PeakWindow and the mean.
func Rate(at []time.Time, run time.Duration) WriteRate {
	rate := WriteRate{Count: len(at)}
	if len(at) == 0 {
		return rate
	}
	sorted := slices.Clone(at)
	slices.SortFunc(sorted, time.Time.Compare)
	busiest, first := 0, 0
	for last := range sorted {
		for sorted[last].Sub(sorted[first]) >= PeakWindow {
			first++
		}
		busiest = max(busiest, last-first+1)
	}
	rate.PeakPerSecond = float64(busiest) / PeakWindow.Seconds()
	if run > 0 {
		rate.MeanPerSecond = float64(len(at)) / run.Seconds()
	}
	return rate
}

// CallSample is the operator's cloud calls so far, by operation, at a moment.
type CallSample struct {
	At    time.Time
	Calls map[string]int
}

// PerMinute turns cumulative samples, in time order from the run's start (the first
// sample, which may be all zeros), into calls per minute by operation: the busiest rate
// over a span between two samples at least a minute apart, and the mean over the whole
// run. Samples fall where they fall, so such a span may be a little longer than a
// minute, and its calls are scaled to one minute's; a span, or a run, shorter than a
// minute counts its calls as one minute's.
func PerMinute(samples []CallSample) map[string]MinuteRate {
	rates := map[string]MinuteRate{}
	if len(samples) == 0 {
		return rates
	}
	first, last := samples[0], samples[len(samples)-1]
	minutes := max(last.At.Sub(first.At).Minutes(), 1)
	ops := map[string]bool{}
	for _, s := range samples {
		for op := range s.Calls {
			ops[op] = true
		}
	}
	for op := range ops {
		total := last.Calls[op] - first.Calls[op]
		peak, from := 0.0, 0
		for i, s := range samples {
			// from is the latest sample at least a minute before s, or the first.
			for from+1 < i && s.At.Sub(samples[from+1].At) >= time.Minute {
				from++
			}
			span := max(s.At.Sub(samples[from].At).Minutes(), 1)
			peak = max(peak, float64(s.Calls[op]-samples[from].Calls[op])/span)
		}
		rates[op] = MinuteRate{Peak: int(math.Round(peak)), Mean: float64(total) / minutes}
	}
	return rates
}

// Bucket is one cumulative bucket of a Prometheus histogram: the observations less
// than or equal to UpperBound.
type Bucket struct {
	UpperBound float64
	Count      uint64
}

// DecisionTime is the operator's provisioning decision time per pass, from its
// stratos_provisioning_duration_seconds histogram.
type DecisionTime struct {
	Passes uint64  `json:"passes"`
	P50    float64 `json:"p50"`
	P99    float64 `json:"p99"`
}

// BucketQuantile estimates the q-th quantile (0 to 1) of a histogram's observations as
// Prometheus's histogram_quantile does: linearly within the bucket it falls in, from
// 0 for the first bucket; the last finite bound when it falls in the +Inf bucket.
// Buckets need not be sorted; NaN when there is no observation.
func BucketQuantile(q float64, buckets []Bucket) float64 {
	sorted := slices.Clone(buckets)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].UpperBound < sorted[j].UpperBound })
	if len(sorted) == 0 || sorted[len(sorted)-1].Count == 0 {
		return math.NaN()
	}
	total := float64(sorted[len(sorted)-1].Count)
	rank := q * total
	lowerBound, below := 0.0, 0.0
	for i, b := range sorted {
		if float64(b.Count) >= rank {
			if math.IsInf(b.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return sorted[i-1].UpperBound
			}
			inBucket := float64(b.Count) - below
			if inBucket == 0 {
				return b.UpperBound
			}
			return lowerBound + (b.UpperBound-lowerBound)*(rank-below)/inBucket
		}
		lowerBound, below = b.UpperBound, float64(b.Count)
	}
	return sorted[len(sorted)-1].UpperBound
}

// scaleRows writes the table's rows of the scale figures through row.
func scaleRows(row func(label, format string, args ...any), r *Report) {
	if d := r.Provisioning.DecisionSeconds; d != nil {
		row("Decision time per pass p50/p99", "%.3fs / %.3fs (%d passes)", d.P50, d.P99, d.Passes)
	}
	s := r.Scale
	if s.NodesLaunchedOrStarted > 0 {
		row("API writes per node launched or started", "%.1f over %d nodes (%s)", s.APIWritesPerNodeTotal, s.NodesLaunchedOrStarted, formatRates(s.APIWritesPerNode, 5))
		row("Events per node", "%.1f", s.EventsPerNode)
	}
	for _, pool := range slices.Sorted(maps.Keys(s.NodePoolStatusWrites)) {
		w := s.NodePoolStatusWrites[pool]
		row("NodePool "+pool+" status writes", "%d, peak %.1f/s over %s, mean %.2f/s", w.Count, w.PeakPerSecond, PeakWindow, w.MeanPerSecond)
	}
	if len(s.CloudCallsPerMinute) > 0 {
		var parts []string
		for _, op := range slices.Sorted(maps.Keys(s.CloudCallsPerMinute)) {
			m := s.CloudCallsPerMinute[op]
			parts = append(parts, fmt.Sprintf("%s=%d/%.1f", op, m.Peak, m.Mean))
		}
		row("Cloud calls per minute peak/mean", "%s", strings.Join(parts, ", "))
	}
}

// formatRates renders the largest limit rates as "key=r" pairs, largest first.
func formatRates(rates map[string]float64, limit int) string {
	keys := slices.Collect(maps.Keys(rates))
	sort.Slice(keys, func(i, j int) bool {
		if rates[keys[i]] != rates[keys[j]] {
			return rates[keys[i]] > rates[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, limit+1)
	for i, k := range keys {
		if i == limit {
			parts = append(parts, fmt.Sprintf("+%d more", len(keys)-limit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s=%.2f", k, rates[k]))
	}
	return strings.Join(parts, ", ")
}
