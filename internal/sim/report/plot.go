package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Layout of the SVG. The plot areas share a left edge and width so that the
// two time strips line up on the same time axis.
const (
	svgWidth   = 980
	svgHeight  = 860
	plotLeft   = 80
	plotWidth  = 680
	legendLeft = plotLeft + plotWidth + 24
)

// phaseOrder lists NodeClaim phases in lifecycle order, so that the legend
// reads like the lifecycle and each phase keeps its colour across runs.
var phaseOrder = []string{"Launching", "Warming", "Standby", "Starting", "Running", "Stopping", "Terminating"}

// palette is colour-blind-friendly enough and distinct on white.
var palette = []string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
}

// WritePlot renders r to path. Only SVG is supported because it needs no
// dependencies; the format is chosen by extension so the CLI flag stays a
// plain file name.
func WritePlot(path string, r *Report) error {
	if ext := filepath.Ext(path); !strings.EqualFold(ext, ".svg") {
		return fmt.Errorf("plot %q: unsupported format %q: only .svg is supported", path, ext)
	}
	// Render fully before touching the file so that an error cannot leave a
	// truncated plot behind.
	var buf bytes.Buffer
	if err := WriteSVG(&buf, r); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}

// WriteSVG writes a self-contained SVG with (a) pods and NodeClaims by phase
// over time and (b) the CDF of pod creation→Running latency, of all pods and
// by the path that served them. Output depends only on r, so identical runs
// produce identical files.
func WriteSVG(w io.Writer, r *Report) error {
	if r == nil {
		r = &Report{}
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	text(&b, plotLeft, 30, "start", 18, "bold", r.title())

	writeTimeline(&b, r.Timeline)
	writeLatencyCDF(&b, r.Pods.Latencies, &r.Pods.ByPath)

	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTimeline draws panel (a) as two strips sharing the time axis: pods and
// NodeClaims differ by orders of magnitude, so one y axis would flatten the
// node lines.
func writeTimeline(b *strings.Builder, timeline []Sample) {
	pods := &chart{title: "(a) Pods", yLabel: "pods",
		left: plotLeft, top: 75, width: plotWidth, height: 185}
	nodes := &chart{title: "NodeClaims by phase", xLabel: "time (s)", yLabel: "NodeClaims",
		left: plotLeft, top: 320, width: plotWidth, height: 185}

	samples := sortedSamples(timeline)
	if len(samples) == 0 {
		pods.noData(b)
		nodes.noData(b)
		return
	}
	podSeries := []series{
		stepSeries(samples, "Pods running", palette[2], "", func(s Sample) int { return s.PodsRunning }),
		stepSeries(samples, "Pods pending", palette[1], "6 3", func(s Sample) int { return s.PodsPending }),
	}
	var nodeSeries []series
	for _, p := range phases(samples) {
		phase := p.name
		nodeSeries = append(nodeSeries, stepSeries(samples, phase, p.color, "",
			func(s Sample) int { return s.NodesByPhase[phase] }))
	}

	first, last := samples[0].Seconds, samples[len(samples)-1].Seconds
	for _, c := range []*chart{pods, nodes} {
		c.setX(first, last, 0)
	}
	pods.setY(0, maxY(podSeries), 1)
	nodes.setY(0, maxY(nodeSeries), 1)
	pods.draw(b, podSeries, legendLeft)
	nodes.draw(b, nodeSeries, legendLeft)
}

// pathColor keeps each path's colour from run to run: the warm pool's in
// green, cold launches in orange, as the timeline's running and pending pods.
var pathColor = map[Path]string{PathStandby: palette[2], PathCold: palette[1], PathExisting: palette[7]}

// writeLatencyCDF draws panel (b): the fraction of pods Running within x
// seconds of creation, of all pods and of each path's (each path's own
// fraction), with the p50 and p99 of all pods marked.
func writeLatencyCDF(b *strings.Builder, latencies []float64, byPath *PodsByPath) {
	c := &chart{title: "(b) Pod creation → Running latency, CDF", xLabel: "seconds", yLabel: "fraction of pods",
		left: plotLeft, top: 595, width: plotWidth, height: 200}
	vals := finiteSorted(latencies)
	if len(vals) == 0 {
		c.noData(b)
		return
	}
	curves := []series{cdfSeries(vals, "all pods", palette[0], "")}
	for _, path := range Paths {
		if pathVals := finiteSorted(byPath.Of(path).Latencies); len(pathVals) > 0 {
			curves = append(curves, cdfSeries(pathVals, string(path), pathColor[path], "6 3"))
		}
	}
	// Start the axis at zero: latency is non-negative and a zero origin makes
	// runs comparable by eye. The paths' latencies are among all pods', so
	// all pods' range holds every curve.
	c.setX(math.Min(0, vals[0]), vals[len(vals)-1], 0)
	c.setY(0, 1, 0)

	p := Percentiles(vals)
	p50 := fmt.Sprintf("p50 = %s s", formatSeconds(p.P50))
	p99 := fmt.Sprintf("p99 = %s s", formatSeconds(p.P99))
	c.draw(b, append(curves,
		series{label: p50, color: palette[4], dash: "4 3"},
		series{label: p99, color: palette[3], dash: "4 3"},
	), legendLeft)
	c.vmark(b, p.P50, palette[4], "p50", 0)
	c.vmark(b, p.P99, palette[3], "p99", 1)
}

// cdfSeries is the empirical CDF of sorted values: a step function that jumps
// by 1/n at each value.
func cdfSeries(sorted []float64, name, color, dash string) series {
	n := float64(len(sorted))
	cdf := series{label: fmt.Sprintf("%s (n=%d)", name, len(sorted)), color: color, dash: dash}
	for i, v := range sorted {
		cdf.pts = append(cdf.pts, point{v, float64(i) / n}, point{v, float64(i+1) / n})
	}
	return cdf
}

// finiteSorted is a sorted copy of values without NaN and infinities, which
// have no place on an axis.
func finiteSorted(values []float64) []float64 {
	out := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	sort.Float64s(out)
	return out
}

// sortedSamples drops samples without a usable time and orders the rest, so
// that the lines never run backwards even if the recorder appended late.
func sortedSamples(in []Sample) []Sample {
	out := make([]Sample, 0, len(in))
	for _, s := range in {
		if !math.IsNaN(s.Seconds) && !math.IsInf(s.Seconds, 0) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seconds < out[j].Seconds })
	return out
}

// stepSeries holds each sample's value until the next sample: the timeline is
// a series of snapshots, and interpolating would show states that never were.
func stepSeries(samples []Sample, label, color, dash string, value func(Sample) int) series {
	s := series{label: label, color: color, dash: dash, pts: make([]point, 0, 2*len(samples))}
	for i, smp := range samples {
		if i > 0 {
			s.pts = append(s.pts, point{smp.Seconds, s.pts[len(s.pts)-1].y})
		}
		s.pts = append(s.pts, point{smp.Seconds, float64(value(smp))})
	}
	return s
}

type phase struct{ name, color string }

// phases lists every phase seen in the timeline: known phases in lifecycle
// order with fixed colours, then unknown ones sorted by name.
func phases(samples []Sample) []phase {
	seen := map[string]bool{}
	for _, s := range samples {
		for name := range s.NodesByPhase {
			seen[name] = true
		}
	}
	var out []phase
	for i, name := range phaseOrder {
		if seen[name] {
			out = append(out, phase{name, palette[i%len(palette)]})
			delete(seen, name)
		}
	}
	extra := make([]string, 0, len(seen))
	for name := range seen {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	for i, name := range extra {
		out = append(out, phase{name, palette[(len(phaseOrder)+i)%len(palette)]})
	}
	return out
}

func maxY(ss []series) float64 {
	m := 0.0
	for _, s := range ss {
		for _, p := range s.pts {
			m = math.Max(m, p.y)
		}
	}
	return m
}

// formatSeconds keeps sub-second latencies readable without printing long
// fractions for large ones.
func formatSeconds(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
