package runner

import (
	"testing"
	"time"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

func TestServingPath(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }
	const node = "fake:///fake-1a/i-1"
	registeredAt := func(seconds int) []nodeRegistration {
		return []nodeRegistration{{at: at(seconds), providerID: node}}
	}
	startedAt := func(seconds ...int) map[string][]time.Time {
		starts := map[string][]time.Time{}
		for _, s := range seconds {
			starts["i-1"] = append(starts["i-1"], at(s))
		}
		return starts
	}
	tests := []struct {
		name              string
		created, running  time.Time
		registrations     []nodeRegistration
		starts            map[string][]time.Time
		want              report.Path
		wantNotClassified bool
	}{
		{
			name:    "a standby node started after the pod came",
			created: at(100), running: at(115),
			registrations: registeredAt(0), starts: startedAt(102),
			want: report.PathStandby,
		},
		{
			name:    "a node started at the very moment the pod was created was stopped when it came",
			created: at(100), running: at(115),
			registrations: registeredAt(0), starts: startedAt(100),
			want: report.PathStandby,
		},
		{
			name:    "a node started before the pod came was already serving",
			created: at(100), running: at(101),
			registrations: registeredAt(0), starts: startedAt(60),
			want: report.PathExisting,
		},
		{
			name:    "a node started earlier, stopped and started again for the pod",
			created: at(100), running: at(115),
			registrations: registeredAt(0), starts: startedAt(30, 102),
			want: report.PathStandby,
		},
		{
			name:    "a node stopped and started again after the pod ran did not serve it from standby",
			created: at(100), running: at(101),
			registrations: registeredAt(0), starts: startedAt(30, 200),
			want: report.PathExisting,
		},
		{
			name:    "a start of another instance does not count",
			created: at(100), running: at(101),
			registrations: registeredAt(0), starts: map[string][]time.Time{"i-2": {at(102)}},
			want: report.PathExisting,
		},
		{
			name:    "a node registered after the pod came was launched cold",
			created: at(100), running: at(150),
			registrations: registeredAt(140),
			want:          report.PathCold,
		},
		{
			name:    "a node registered at the very moment the pod was created was not there when it came",
			created: at(100), running: at(150),
			registrations: registeredAt(100),
			want:          report.PathCold,
		},
		{
			name:    "a node registered before the pod came, never stopped, was existing (as one still warming)",
			created: at(100), running: at(110),
			registrations: registeredAt(90),
			want:          report.PathExisting,
		},
		{
			name:    "a stopped node whose Node registers again when it starts was served from standby",
			created: at(100), running: at(115),
			registrations: []nodeRegistration{{at: at(0), providerID: node}, {at: at(110), providerID: node}},
			starts:        startedAt(102),
			want:          report.PathStandby,
		},
		{
			name:    "a name that came back with a new instance: the registration before the pod ran serves it",
			created: at(100), running: at(150),
			registrations: []nodeRegistration{{at: at(0), providerID: "aws:///us-east-1a/i-old"}, {at: at(140), providerID: "aws:///us-east-1a/i-new"}},
			starts:        map[string][]time.Time{"i-old": {at(120)}},
			want:          report.PathCold,
		},
		{
			name:    "a Node seen only after its pod ran (a lagging watch) still serves it",
			created: at(100), running: at(150),
			registrations: registeredAt(151),
			want:          report.PathCold,
		},
		{
			name:    "a pod that never ran has no path",
			created: at(100), registrations: registeredAt(0), starts: startedAt(102),
			wantNotClassified: true,
		},
		{
			name:    "a pod whose node was never seen has no path",
			created: at(100), running: at(150),
			wantNotClassified: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := servingPath(tt.created, tt.running, tt.registrations, tt.starts)
			if tt.wantNotClassified {
				if ok {
					t.Fatalf("servingPath = %q, want no path", got)
				}
				return
			}
			if !ok || got != tt.want {
				t.Errorf("servingPath = %q (classified %v), want %q", got, ok, tt.want)
			}
		})
	}
}

func TestInstanceOf(t *testing.T) {
	for providerID, want := range map[string]string{
		"fake:///fake-1a/i-0abc":         "i-0abc",
		"aws:///us-east-1a/i-0123456789": "i-0123456789",
		"":                               "",
	} {
		if got := instanceOf(providerID); got != want {
			t.Errorf("instanceOf(%q) = %q, want %q", providerID, got, want)
		}
	}
}

func TestStartsByInstance(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	starts := startsByInstance([]startCall{
		{at: t0, ids: []string{"i-1", "i-2"}},
		{at: t0.Add(time.Minute), ids: []string{"i-1"}},
	})
	if len(starts["i-1"]) != 2 || !starts["i-1"][1].Equal(t0.Add(time.Minute)) || len(starts["i-2"]) != 1 {
		t.Errorf("startsByInstance = %v, want i-1 started twice and i-2 once", starts)
	}
}
