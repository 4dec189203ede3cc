package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// topAPIWriteKinds bounds the API-write breakdown so that the summary stays
// readable; the JSON report carries the full map.
const topAPIWriteKinds = 5

// WriteTable writes a plain-text summary of r for a terminal. It is meant to
// answer "did it pass, how fast, at what cost" at a glance; the JSON report
// is the place for detail.
func WriteTable(w io.Writer, r *Report) error {
	if r == nil {
		r = &Report{}
	}
	// errWriter lets us write many lines and check for an error once.
	ew := &errWriter{w: w}

	ew.printf("Scenario %s\n", r.title())
	for _, f := range r.Failures {
		ew.printf("  - %s\n", f)
	}

	if len(r.Steps) > 0 {
		ew.printf("\nSteps\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, s := range r.Steps {
			mark := "✓"
			if !s.OK {
				mark = "✗"
			}
			detail := oneLine(s.Message)
			if len(s.CloudCalls) > 0 {
				detail = strings.TrimSpace(detail + " cloud calls: " + formatCounts(s.CloudCalls, byName, 0))
			}
			if claims := stepClaims(s); claims != "" {
				detail = strings.TrimSpace(detail + " claims: " + claims)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%.1fs\t%s\n", mark, s.Index, oneLine(s.Description), s.Seconds, detail)
		}
		ew.check(tw.Flush())
	}

	ew.printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	row := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", label, fmt.Sprintf(format, args...))
	}
	row("Pods created / running", "%d / %d", r.Pods.Created, r.Pods.Running)
	row("Pod latency p50/p90/p99/max", "%s", formatLatency(r.Pods.LatencySeconds))
	for _, path := range Paths {
		served := r.Pods.ByPath.Of(path)
		if served.Count == 0 {
			row("  "+pathLabel[path], "none")
			continue
		}
		row("  "+pathLabel[path], "%s (%s)", formatLatency(served.LatencySeconds), podCount(served.Count))
	}
	for _, name := range sortedWorkloads(r.Pods.ByWorkload) {
		served := r.Pods.ByWorkload[name]
		row("  of "+name+" p50/p90/p99/max", "%s (%s: %d standby, %d cold, %d existing)", formatLatency(served.LatencySeconds),
			podCount(served.Count), served.Paths.Standby, served.Paths.Cold, served.Paths.Existing)
	}
	row("Start-call latency p50/p90/p99/max", "%s", formatLatency(r.Provisioning.StartCallLatencySeconds))
	if in := r.Interruptions; in != nil {
		row("Interruptions: instances / pods displaced / replaced / killed", "%d / %d / %d / %d",
			in.Instances, in.PodsDisplaced, in.PodsReplaced, in.PodsKilled)
		row("  notice → running elsewhere p50/p90/p99/max", "%s", formatLatency(in.RecoverySeconds))
		row("  replacements from standby / cold / existing", "%d / %d / %d",
			in.Replacements.Standby, in.Replacements.Cold, in.Replacements.Existing)
	}
	if rep := r.Repairs; rep != nil {
		row("Repairs: nodes / pods displaced / replaced", "%d / %d / %d", rep.Nodes, rep.PodsDisplaced, rep.PodsReplaced)
		row("  unhealthy → running elsewhere p50/p90/p99/max", "%s", formatLatency(rep.RecoverySeconds))
	}
	row("Nodes from standby / warming / cold / peak", "%d / %d / %d / %d",
		r.Nodes.StartedFromStandby, r.Nodes.TakenWhileWarming, r.Nodes.LaunchedCold, r.Nodes.Peak)
	for _, pool := range sortedPools(r.Standby) {
		standby := r.Standby[pool]
		row("Standby node-hours of pool "+pool, "%.2f (at most %d standby at once)", standby.NodeHours, standby.Peak)
	}
	row("Cloud calls", "%s", formatCounts(r.CloudCalls, byName, 0))
	if len(r.CloudErrors) > 0 {
		row("Cloud errors", "%s", formatCounts(r.CloudErrors, byName, 0))
	}
	if len(r.SimulatorCloudCalls) > 0 {
		row("Simulator's cloud calls", "%s", formatCounts(r.SimulatorCloudCalls, byName, 0))
	}
	row("API writes", "%d total (%s)", sumCounts(r.APIWrites), formatCounts(r.APIWrites, byCount, topAPIWriteKinds))
	scaleRows(row, r)
	row("Invariants leaked / duplicate / orphan", "%d / %d / %d",
		r.Invariants.LeakedInstances, r.Invariants.DuplicateInstances, r.Invariants.OrphanClaims)
	row("Operator restarts / peak RSS", "%d / %.1f MiB",
		r.Operator.Restarts, float64(r.Operator.PeakRSSBytes)/(1<<20))
	row("Wall time / time scale", "%.1fs / %gx", r.WallSeconds, r.TimeScale)
	ew.check(tw.Flush())

	// The closing lines are the figures the demo is about: what the warm pool
	// saves a pod against a cold launch.
	ew.printf("\n")
	ew.printf("Pods served from standby: %s\n", formatServed(r.Pods.ByPath.Standby))
	ew.printf("Pods served by cold launches: %s\n", formatServed(r.Pods.ByPath.Cold))
	return ew.err
}

// pathLabel names each path in the table's rows.
var pathLabel = map[Path]string{
	PathStandby:  "from standby p50/p90/p99/max",
	PathCold:     "from cold launches p50/p90/p99/max",
	PathExisting: "on existing nodes p50/p90/p99/max",
}

// formatServed is a path's median and p90 creation→Running latency.
func formatServed(s ServedPods) string {
	if s.Count == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %s s, p90 %s s (%s)", formatSeconds(s.LatencySeconds.P50), formatSeconds(s.LatencySeconds.P90), podCount(s.Count))
}

// sortedWorkloads lists the workloads in name order, for stable output.
func sortedWorkloads(byWorkload map[string]WorkloadPods) []string {
	names := make([]string, 0, len(byWorkload))
	for name := range byWorkload {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func podCount(n int) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}

func formatLatency(l Latency) string {
	return fmt.Sprintf("%.2fs / %.2fs / %.2fs / %.2fs", l.P50, l.P90, l.P99, l.Max)
}

// Orders for formatCounts. Cloud calls read best by name (the set of
// operations is small and fixed, so runs line up); API writes are many kinds,
// so the biggest contributors come first.
const (
	byName = iota
	byCount
)

// formatCounts renders counts as "key=n" pairs in the given order, keeping at
// most limit entries when limit > 0. Ties sort by name so output is stable.
func formatCounts(counts map[string]int, order, limit int) string {
	if len(counts) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if order == byCount && counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	more := 0
	if limit > 0 && len(keys) > limit {
		more = len(keys) - limit
		keys = keys[:limit]
	}
	parts := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, counts[k]))
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("+%d more", more))
	}
	return strings.Join(parts, ", ")
}

func sumCounts(counts map[string]int) int {
	total := 0
	for _, n := range counts {
		total += n
	}
	return total
}

// oneLine keeps multi-line messages (e.g. wrapped errors) from breaking the
// tabwriter's column alignment.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}

func (e *errWriter) check(err error) {
	if e.err == nil {
		e.err = err
	}
}

// stepClaims says how many claims a step launched cold, started from standby and took
// while warming, leaving out the kinds it had none of.
func stepClaims(s Step) string {
	var parts []string
	for _, c := range []struct {
		n     int
		label string
	}{{s.LaunchedCold, "launched cold"}, {s.StartedFromStandby, "started from standby"}, {s.TakenWhileWarming, "taken while warming"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.label))
		}
	}
	return strings.Join(parts, ", ")
}
