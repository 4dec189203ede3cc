package stack

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric returns the series of a metric of this process whose labels include every one
// of labels, or nil when there is none. Tests of one process share the registry: they
// name their pools apart so that their series do not mix.
func Metric(t testing.TB, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return m
			}
		}
	}
	return nil
}

// Counter returns the value of a counter's series (see Metric), 0 when it has none yet.
func Counter(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	return Metric(t, name, labels).GetCounter().GetValue()
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// CounterTotal returns the sum of every series of a counter, 0 when it has none yet.
func CounterTotal(t testing.TB, name string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range families {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
