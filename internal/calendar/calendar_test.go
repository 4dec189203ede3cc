package calendar

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTheFileSetsTheCalendarAndItAdvancesAtItsRate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calendar.json")
	real := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	f, err := NewFile(path, real)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Now().Equal(real.Now()) {
		t.Fatalf("without a file the calendar is %s, want the real clock", f.Now())
	}
	monday := time.Date(2026, 11, 23, 7, 59, 0, 0, time.UTC)
	if err := Write(path, Setting{Time: monday, SetAt: real.Now(), Rate: 10}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.Watch(ctx, 10*time.Millisecond) }()
	select {
	case <-f.Changed():
	case <-time.After(10 * time.Second):
		t.Fatal("the calendar did not signal the new setting")
	}
	real.SetTime(real.Now().Add(6 * time.Second))
	if want := monday.Add(time.Minute); !f.Now().Equal(want) {
		t.Fatalf("calendar %s, want %s: six real seconds at rate 10", f.Now(), want)
	}
}
