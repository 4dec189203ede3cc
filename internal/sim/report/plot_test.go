package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parseSVG checks that out is well-formed XML and returns all character data,
// so tests can look for labels without depending on the exact markup.
func parseSVG(t *testing.T, out []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(out))
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not valid XML: %v\n%s", err, out)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			text.Write(tok)
			text.WriteByte('\n')
		}
	}
	if root != "svg" {
		t.Fatalf("root element = %q, want svg", root)
	}
	return text.String()
}

func TestWriteSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	text := parseSVG(t, buf.Bytes())
	for _, want := range []string{
		"burst-<100>&co", // escaped in the file, unescaped by the parser
		"Pods running", "Pods pending",
		"Standby", "Starting", "Launching", "Running", "Custom<x>",
		"p50", "p99", "all pods (n=6)", "standby (n=4)", "cold (n=2)", "time (s)", "seconds",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG text lacks %q", want)
		}
	}
	if strings.Contains(text, "no data") {
		t.Error("populated report should not show \"no data\"")
	}
	if strings.Contains(text, "existing (n=") {
		t.Error("a path no pod took should have no curve")
	}
	// Known phases come in lifecycle order, unknown phases after them.
	order := []string{"Launching", "Standby", "Starting", "Running\n", "Custom<x>"}
	last := -1
	for _, p := range order {
		i := strings.Index(text, p)
		if i < last {
			t.Errorf("legend order: %q appears before the previous phase", p)
		}
		last = i
	}
}

func TestWriteSVGDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteSVG(&a, sampleReport()); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b.Reset()
		if err := WriteSVG(&b, sampleReport()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatal("WriteSVG output differs between identical reports")
		}
	}
}

func TestWriteSVGEmpty(t *testing.T) {
	for name, r := range map[string]*Report{
		"nil":   nil,
		"empty": {},
		"degenerate": {
			Timeline: []Sample{{Seconds: 3}, {Seconds: math.NaN()}},
			Pods:     Pods{Latencies: []float64{0, 0, math.Inf(1)}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSVG(&buf, r); err != nil {
				t.Fatal(err)
			}
			text := parseSVG(t, buf.Bytes())
			if name != "degenerate" && strings.Count(text, "no data") != 3 {
				t.Errorf("want three empty panels marked \"no data\", got:\n%s", text)
			}
			if strings.Contains(buf.String(), "NaN") || strings.Contains(buf.String(), "Inf") {
				t.Errorf("SVG contains non-finite coordinates:\n%s", buf.String())
			}
		})
	}
}

func TestWritePlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.SVG")
	if err := WritePlot(path, sampleReport()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parseSVG(t, data)

	png := filepath.Join(dir, "plot.png")
	err = WritePlot(png, sampleReport())
	if err == nil || !strings.Contains(err.Error(), "only .svg is supported") {
		t.Errorf("WritePlot(.png) error = %v, want one saying only .svg is supported", err)
	}
	if _, statErr := os.Stat(png); !os.IsNotExist(statErr) {
		t.Error("WritePlot should not create a file for an unsupported format")
	}
}

func TestNiceRange(t *testing.T) {
	tests := []struct {
		lo, hi, minStep          float64
		wantLo, wantHi, wantStep float64
	}{
		{0, 97, 1, 0, 100, 20},
		{0, 3, 1, 0, 3, 1},
		{0, 1, 0, 0, 1, 0.2},
		{5, 5, 0, 5, 6, 0.2},
		{0, 0, 1, 0, 1, 1},
		{12, 3607, 0, 0, 4000, 500},
		{0, 120, 0, 0, 120, 20}, // not padded out to 150
		{0, 14, 1, 0, 14, 2},
	}
	for _, tt := range tests {
		lo, hi, step := niceRange(tt.lo, tt.hi, tt.minStep)
		if math.Abs(lo-tt.wantLo) > 1e-9 || math.Abs(hi-tt.wantHi) > 1e-9 || math.Abs(step-tt.wantStep) > 1e-9 {
			t.Errorf("niceRange(%v, %v, %v) = %v, %v, %v; want %v, %v, %v",
				tt.lo, tt.hi, tt.minStep, lo, hi, step, tt.wantLo, tt.wantHi, tt.wantStep)
		}
	}
	if got := formatTick(0.6000000000000001, 0.2); got != "0.6" {
		t.Errorf("formatTick = %q, want 0.6", got)
	}
	if got := formatTick(-1e-17, 0.2); got != "0.0" {
		t.Errorf("formatTick = %q, want 0.0", got)
	}
}
