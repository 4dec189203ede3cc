package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// sampleInterval is how often, in wall time, the timeline is sampled and the operator's
// memory read.
const sampleInterval = 500 * time.Millisecond

// scrapeInterval is how often, in wall time, the operator's metrics are read.
const scrapeInterval = 5 * time.Second

// watch samples the timeline and the operator's memory, and prints progress, until ctx
// ends.
func (r *run) watch(ctx context.Context) {
	interval := r.opts.ProgressInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	sample := time.NewTicker(sampleInterval)
	defer sample.Stop()
	progress := time.NewTicker(interval)
	defer progress.Stop()
	var last *view
	r.sampleCalls(r.started)
	// The operator's histogram is read every few seconds: often enough to keep its
	// figures across a restart, rarely enough to cost the operator nothing to speak of.
	scrape := time.NewTicker(scrapeInterval)
	defer scrape.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-scrape.C:
			r.decisions.scrape(ctx)
		case now := <-sample.C:
			r.operator.SampleRSS()
			r.sampleCalls(now)
			v, err := look(ctx, r.client, r.observer)
			if err != nil {
				continue
			}
			last = v
			r.observeStandby(v)
			r.mu.Lock()
			r.timeline = append(r.timeline, report.Sample{Seconds: r.now(), PodsRunning: v.podsRunning, PodsPending: v.podsPending, NodesByPhase: v.byPhase()})
			r.peakNodes = max(r.peakNodes, v.readyNodes)
			r.mu.Unlock()
		case <-progress.C:
			if last != nil {
				r.progress("%s", describeView(last))
			}
		}
	}
}

// progress prints a line prefixed with the scenario time.
func (r *run) progress(format string, args ...any) {
	if r.opts.Progress == nil {
		return
	}
	at := 0.0
	if !r.started.IsZero() {
		at = r.now()
	}
	fmt.Fprintf(r.opts.Progress, "[%7.1fs] %s\n", at, fmt.Sprintf(format, args...))
}

// describeView is the live line: pods, ready nodes and claims by phase.
func describeView(v *view) string {
	phases := v.byPhase()
	parts := make([]string, 0, len(phases))
	for _, phase := range slices.Sorted(maps.Keys(phases)) {
		parts = append(parts, fmt.Sprintf("%s %d", phase, phases[phase]))
	}
	claims := "none"
	if len(parts) > 0 {
		claims = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("pods running %d, pending %d | ready nodes %d | claims: %s", v.podsRunning, v.podsPending, v.readyNodes, claims)
}
