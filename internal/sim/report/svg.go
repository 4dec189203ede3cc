package report

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// point is a coordinate in data space (seconds, counts, fractions).
type point struct{ x, y float64 }

// series is one line of a chart, already shaped (e.g. into steps) by the
// caller so that the drawing code stays generic.
type series struct {
	label string
	color string
	dash  string // SVG stroke-dasharray; empty for a solid line
	pts   []point
}

// chart maps a data range onto a rectangle of the SVG and draws into it.
type chart struct {
	title, xLabel, yLabel    string
	left, top, width, height float64 // plot area in SVG pixels
	x0, x1, xStep            float64 // data range and tick spacing
	y0, y1, yStep            float64
}

func (c *chart) px(x float64) float64 { return c.left + (x-c.x0)/(c.x1-c.x0)*c.width }
func (c *chart) py(y float64) float64 { return c.top + c.height - (y-c.y0)/(c.y1-c.y0)*c.height }

// setX and setY widen the range to whole ticks so that the axes start and
// end on a labelled value. minStep keeps count axes on whole numbers.
func (c *chart) setX(lo, hi, minStep float64) { c.x0, c.x1, c.xStep = niceRange(lo, hi, minStep) }
func (c *chart) setY(lo, hi, minStep float64) { c.y0, c.y1, c.yStep = niceRange(lo, hi, minStep) }

// frame draws the title and border. Every chart gets one, even without data,
// so the layout is the same from run to run.
func (c *chart) frame(b *strings.Builder) {
	text(b, c.left, c.top-8, "start", 14, "bold", c.title)
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n",
		c.left, c.top, c.width, c.height)
}

func (c *chart) noData(b *strings.Builder) {
	c.frame(b)
	text(b, c.left+c.width/2, c.top+c.height/2, "middle", 14, "normal", "no data")
}

// draw renders a whole chart with its legend placed right of the plot area,
// where it cannot hide any line. The ranges must have been set.
func (c *chart) draw(b *strings.Builder, ss []series, legendX float64) {
	if len(ss) == 0 {
		c.noData(b)
		return
	}
	c.axes(b)
	c.frame(b)
	for _, s := range ss {
		c.line(b, s)
	}
	legend(b, legendX, c.top, ss)
}

func (c *chart) axes(b *strings.Builder) {
	bottom := c.top + c.height
	for _, v := range ticks(c.x0, c.x1, c.xStep) {
		x := c.px(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x, c.top, x, bottom)
		text(b, x, bottom+16, "middle", 11, "normal", formatTick(v, c.xStep))
	}
	for _, v := range ticks(c.y0, c.y1, c.yStep) {
		y := c.py(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", c.left, y, c.left+c.width, y)
		text(b, c.left-6, y+4, "end", 11, "normal", formatTick(v, c.yStep))
	}
	if c.xLabel != "" {
		text(b, c.left+c.width/2, bottom+34, "middle", 12, "normal", c.xLabel)
	}
	if c.yLabel != "" {
		x, y := c.left-48, c.top+c.height/2
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
			x, y, x, y, escape(c.yLabel))
	}
}

func (c *chart) line(b *strings.Builder, s series) {
	if len(s.pts) == 0 {
		return
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8"`, s.color)
	if s.dash != "" {
		fmt.Fprintf(b, ` stroke-dasharray="%s"`, s.dash)
	}
	b.WriteString(` points="`)
	for i, p := range s.pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", c.px(p.x), c.py(p.y))
	}
	b.WriteString("\"/>\n")
}

// vmark draws a labelled vertical line, e.g. a percentile on the CDF. row
// staggers labels so that close marks do not print over each other.
func (c *chart) vmark(b *strings.Builder, x float64, color, label string, row int) {
	px := c.px(x)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="4 3"/>`+"\n",
		px, c.top, px, c.top+c.height, color)
	anchor, tx := "start", px+4
	if px > c.left+c.width*0.8 {
		anchor, tx = "end", px-4
	}
	text(b, tx, c.top+14+float64(row)*14, anchor, 11, "normal", label)
}

func legend(b *strings.Builder, x, y float64, ss []series) {
	for i, s := range ss {
		ly := y + 10 + float64(i)*18
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"`, x, ly, x+22, ly, s.color)
		if s.dash != "" {
			fmt.Fprintf(b, ` stroke-dasharray="%s"`, s.dash)
		}
		b.WriteString("/>\n")
		text(b, x+28, ly+4, "start", 12, "normal", s.label)
	}
}

func text(b *strings.Builder, x, y float64, anchor string, size int, weight, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d" font-weight="%s">%s</text>`+"\n",
		x, y, anchor, size, weight, escape(s))
}

// escape makes arbitrary text (scenario names, phases) safe as XML character
// data; xml.EscapeText also replaces characters XML cannot represent.
func escape(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s)) // a strings.Builder never fails
	return sb.String()
}

// niceRange widens [lo, hi] to multiples of a 1-2-5 step. It takes the
// largest step that still gives at least four intervals (so at most about
// ten), which keeps the axis close to the data instead of padding it out.
// An empty range is widened so that a single value still gets axes.
func niceRange(lo, hi, minStep float64) (float64, float64, float64) {
	if !(hi > lo) {
		hi = lo + math.Max(1, minStep)
	}
	limit := (hi - lo) / 4
	mag := math.Pow(10, math.Floor(math.Log10(limit)))
	step := mag
	for _, m := range []float64{5, 2} {
		if m*mag <= limit {
			step = m * mag
			break
		}
	}
	step = math.Max(step, minStep)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step, step
}

// ticks computes each tick from its index rather than by repeated addition so
// that floating-point error cannot add or drop a tick.
func ticks(lo, hi, step float64) []float64 {
	n := int(math.Round((hi - lo) / step))
	if n < 0 || n > 100 {
		return nil
	}
	out := make([]float64, 0, n+1)
	for i := 0; i <= n; i++ {
		out = append(out, lo+float64(i)*step)
	}
	return out
}

// formatTick prints just enough decimals for the step, and never "-0".
func formatTick(v, step float64) string {
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if math.Abs(v) < step*1e-6 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
