package cloudprovider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// guard bounds every wait of these tests, so that a broken batcher fails them rather
// than hanging them. Nothing waits for it to pass.
const guard = 10 * time.Second

// heldCloud is an exec function whose calls are held in flight until the test releases
// them: each call announces its keys on calls as it starts, then waits for release.
type heldCloud struct {
	calls   chan []string
	release chan struct{}
	fail    map[string]error
	whole   error

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	// ctxErrs are the errors of the calls' contexts as the calls answered.
	ctxErrs []error
	// deadlines are how long each call had left when it started.
	deadlines []time.Duration
}

func newHeldCloud() *heldCloud {
	return &heldCloud{calls: make(chan []string), release: make(chan struct{}), fail: map[string]error{}}
}

func (h *heldCloud) exec(ctx context.Context, keys []string) map[string]result[string] {
	h.mu.Lock()
	h.inFlight++
	h.maxInFlight = max(h.maxInFlight, h.inFlight)
	if deadline, ok := ctx.Deadline(); ok {
		h.deadlines = append(h.deadlines, time.Until(deadline))
	}
	h.mu.Unlock()

	h.calls <- slices.Clone(keys)
	<-h.release

	h.mu.Lock()
	h.inFlight--
	h.ctxErrs = append(h.ctxErrs, ctx.Err())
	h.mu.Unlock()
	out := map[string]result[string]{}
	for _, k := range keys {
		switch {
		case h.whole != nil:
			out[k] = result[string]{err: h.whole}
		case h.fail[k] != nil:
			out[k] = result[string]{err: h.fail[k]}
		default:
			out[k] = result[string]{value: "done:" + k}
		}
	}
	return out
}

// nextCall returns the keys of the next call to start.
func (h *heldCloud) nextCall(t *testing.T) []string {
	t.Helper()
	select {
	case keys := <-h.calls:
		slices.Sort(keys)
		return keys
	case <-time.After(guard):
		t.Fatal("no call started")
		return nil
	}
}

// noCall checks that no call has started: the calls channel is unbuffered, so a call
// that started would be blocked sending on it.
func (h *heldCloud) noCall(t *testing.T) {
	t.Helper()
	select {
	case keys := <-h.calls:
		t.Fatalf("a call of %v started", keys)
	default:
	}
}

// answer lets the call in flight answer.
func (h *heldCloud) answer(t *testing.T) {
	t.Helper()
	select {
	case h.release <- struct{}{}:
	case <-time.After(guard):
		t.Fatal("no call to release")
	}
}

// outcome is what one caller of do got.
type outcome struct {
	key   string
	value string
	err   error
}

// ask calls do for key in the background and returns where its outcome will arrive.
func ask(ctx context.Context, b *batcher[string, string], key string) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		v, err := b.do(ctx, key)
		out <- outcome{key: key, value: v, err: err}
	}()
	return out
}

func receive(t *testing.T, c <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-c:
		return o
	case <-time.After(guard):
		t.Fatal("a caller got no answer")
		return outcome{}
	}
}

// waitQueued waits until n keys wait for the call in flight.
func waitQueued(t *testing.T, b *batcher[string, string], n int) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		b.mu.Lock()
		queued := len(b.waiting)
		b.mu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d keys queued, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("i-%03d", i)
	}
	return out
}

var options = BatchOptions{MaxItems: 100, Timeout: time.Minute}

// A lone item goes at once, in a call of its own: the call starts while the caller
// waits, with nothing else asked, and no timer is involved that could hold it.
func TestBatcherSendsALoneItemAtOnce(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(options, h.exec)
	got := ask(context.Background(), b, "i-1")
	if keys := h.nextCall(t); !slices.Equal(keys, []string{"i-1"}) {
		t.Fatalf("first call carried %v, want [i-1]", keys)
	}
	h.answer(t)
	if o := receive(t, got); o.err != nil || o.value != "done:i-1" {
		t.Fatalf("caller got %q, %v", o.value, o.err)
	}
}

// Items asked while a call is in flight queue, and all go in exactly one next call
// when it returns; then nothing is in flight, and the next lone item goes at once again.
func TestBatcherSendsItemsQueuedDuringACallInTheNextCall(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(options, h.exec)
	first := ask(context.Background(), b, "i-000")
	h.nextCall(t)

	var outcomes []<-chan outcome
	for _, k := range keys(21)[1:] {
		outcomes = append(outcomes, ask(context.Background(), b, k))
	}
	waitQueued(t, b, 20)
	h.noCall(t)
	h.answer(t)
	if o := receive(t, first); o.err != nil {
		t.Fatal(o.err)
	}
	if second := h.nextCall(t); !slices.Equal(second, keys(21)[1:]) {
		t.Fatalf("second call carried %v, want the 20 items queued during the first", second)
	}
	h.answer(t)
	for _, c := range outcomes {
		if o := receive(t, c); o.err != nil || o.value != "done:"+o.key {
			t.Errorf("caller %s got %q, %v; want its own result", o.key, o.value, o.err)
		}
	}

	last := ask(context.Background(), b, "i-last")
	if third := h.nextCall(t); !slices.Equal(third, []string{"i-last"}) {
		t.Fatalf("third call carried %v, want [i-last]", third)
	}
	h.answer(t)
	receive(t, last)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxInFlight != 1 {
		t.Errorf("%d calls were in flight at once, want 1", h.maxInFlight)
	}
}

// More items than MaxItems queued during a call go in as many calls as needed, one
// after the other, none over the cap.
func TestBatcherSplitsQueuedItemsAtMaxItems(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(BatchOptions{MaxItems: 10, Timeout: time.Minute}, h.exec)
	first := ask(context.Background(), b, "i-first")
	h.nextCall(t)
	var outcomes []<-chan outcome
	for _, k := range keys(25) {
		outcomes = append(outcomes, ask(context.Background(), b, k))
	}
	waitQueued(t, b, 25)
	h.answer(t)
	receive(t, first)

	var sizes []int
	var sent []string
	for range 3 {
		call := h.nextCall(t)
		sizes = append(sizes, len(call))
		sent = append(sent, call...)
		h.noCall(t)
		h.answer(t)
	}
	slices.Sort(sent)
	if !slices.Equal(sizes, []int{10, 10, 5}) || !slices.Equal(sent, keys(25)) {
		t.Fatalf("calls carried %v items (%d in all), want 10, 10 and 5 of the 25", sizes, len(sent))
	}
	for _, c := range outcomes {
		if o := receive(t, c); o.err != nil {
			t.Errorf("caller %s: %v", o.key, o.err)
		}
	}
}

// A key asked for several times while it waits is sent once and every caller gets its
// result; a key asked for while it is in the call in flight goes in the next call.
func TestBatcherSendsADuplicateKeyOnce(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(options, h.exec)
	first := ask(context.Background(), b, "i-1")
	h.nextCall(t)
	var outcomes []<-chan outcome
	for _, k := range []string{"i-1", "i-2", "i-2", "i-2", "i-3"} {
		outcomes = append(outcomes, ask(context.Background(), b, k))
	}
	waitQueued(t, b, 3)
	h.answer(t)
	receive(t, first)
	if second := h.nextCall(t); !slices.Equal(second, []string{"i-1", "i-2", "i-3"}) {
		t.Fatalf("second call carried %v, want each distinct key once", second)
	}
	h.answer(t)
	for _, c := range outcomes {
		if o := receive(t, c); o.err != nil || o.value != "done:"+o.key {
			t.Errorf("caller %s got %q, %v", o.key, o.value, o.err)
		}
	}
}

func TestBatcherRoutesPerItemAndWholeCallErrors(t *testing.T) {
	notFound := NewError(CodeNotFound, OpStart, "i-001", "gone")
	throttled := NewError(CodeThrottled, OpStart, "", "slow down")
	for _, tc := range []struct {
		name  string
		setup func(*heldCloud)
		check func(t *testing.T, o outcome)
	}{
		{"per item", func(h *heldCloud) { h.fail["i-001"] = notFound }, func(t *testing.T, o outcome) {
			if o.key == "i-001" && !errors.Is(o.err, ErrNotFound) {
				t.Errorf("i-001 got %v, want its NotFound error", o.err)
			}
			if o.key != "i-001" && o.err != nil {
				t.Errorf("%s got %v, want success", o.key, o.err)
			}
		}},
		{"whole call", func(h *heldCloud) { h.whole = throttled }, func(t *testing.T, o outcome) {
			if !errors.Is(o.err, ErrThrottled) {
				t.Errorf("%s got %v, want the whole-call Throttled error", o.key, o.err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeldCloud()
			tc.setup(h)
			b := newBatcher(options, h.exec)
			first := ask(context.Background(), b, "i-000")
			h.nextCall(t)
			rest := []<-chan outcome{ask(context.Background(), b, "i-001"), ask(context.Background(), b, "i-002")}
			waitQueued(t, b, 2)
			h.answer(t)
			tc.check(t, receive(t, first))
			h.nextCall(t)
			h.answer(t)
			for _, c := range rest {
				tc.check(t, receive(t, c))
			}
		})
	}
}

// A caller that gives up gets its context's error at once; the call it was in goes on
// for the others, on a context its cancellation does not reach, bounded by Timeout.
func TestBatcherCallerCancellationLeavesTheCallToOthers(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(BatchOptions{MaxItems: 100, Timeout: time.Minute}, h.exec)
	openerCtx, cancelOpener := context.WithCancel(context.Background())
	opener := ask(openerCtx, b, "i-opener")
	h.nextCall(t)

	queuedCtx, cancelQueued := context.WithCancel(context.Background())
	quitter := ask(queuedCtx, b, "i-quitter")
	stayer := ask(context.Background(), b, "i-stayer")
	waitQueued(t, b, 2)

	cancelOpener()
	cancelQueued()
	for _, c := range []<-chan outcome{opener, quitter} {
		if o := receive(t, c); !errors.Is(o.err, context.Canceled) {
			t.Fatalf("cancelled caller %s got %v, want context.Canceled", o.key, o.err)
		}
	}
	h.answer(t)
	if second := h.nextCall(t); !slices.Equal(second, []string{"i-quitter", "i-stayer"}) {
		t.Fatalf("second call carried %v", second)
	}
	h.answer(t)
	if o := receive(t, stayer); o.err != nil || o.value != "done:i-stayer" {
		t.Fatalf("the caller that stayed got %q, %v", o.value, o.err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for n, err := range h.ctxErrs {
		if err != nil {
			t.Errorf("call %d ran on a context ended by a caller: %v", n, err)
		}
	}
	for n, left := range h.deadlines {
		if left <= 0 || left > time.Minute {
			t.Errorf("call %d had %s left, want a deadline within the minute of Timeout", n, left)
		}
	}
	if len(h.deadlines) != 2 {
		t.Errorf("%d calls had a deadline, want both", len(h.deadlines))
	}
}

// A burst of items asked at once makes one call for the first and one for the rest.
func TestBatcherJoinsABurstIntoTwoCalls(t *testing.T) {
	h := newHeldCloud()
	b := newBatcher(options, h.exec)
	var wg sync.WaitGroup
	var mu sync.Mutex
	values := map[string]string{}
	for _, k := range keys(50) {
		wg.Go(func() {
			v, err := b.do(context.Background(), k)
			if err != nil {
				t.Errorf("%s: %v", k, err)
			}
			mu.Lock()
			values[k] = v
			mu.Unlock()
		})
	}
	first := h.nextCall(t)
	waitQueued(t, b, 50-len(first))
	h.answer(t)
	second := h.nextCall(t)
	h.answer(t)
	wg.Wait()
	if len(first) != 1 || len(second) != 49 {
		t.Fatalf("calls carried %d and %d items, want 1 and 49", len(first), len(second))
	}
	for _, k := range keys(50) {
		if values[k] != "done:"+k {
			t.Errorf("caller %s got %q, want its own result", k, values[k])
		}
	}
}

// A paced batcher starts its calls at least the interval apart: items asked after a
// call returned, but within the interval of its start, wait together for one call at
// the interval's end, and a lone item asked after the interval goes at once.
func TestPacedBatcherStartsCallsAnIntervalApart(t *testing.T) {
	h := newHeldCloud()
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	b := newPacedBatcher(BatchOptions{MaxItems: 100, Timeout: time.Minute, Clock: clk}, time.Second, h.exec)
	first := ask(context.Background(), b, "i-000")
	if keys := h.nextCall(t); !slices.Equal(keys, []string{"i-000"}) {
		t.Fatalf("first call carried %v, want [i-000]", keys)
	}
	h.answer(t)
	receive(t, first)

	var outcomes []<-chan outcome
	for _, k := range keys(6)[1:] {
		outcomes = append(outcomes, ask(context.Background(), b, k))
	}
	waitQueued(t, b, 5)
	clk.Step(999 * time.Millisecond)
	if !clk.HasWaiters() {
		t.Fatal("the queued items did not wait for the interval")
	}
	h.noCall(t)
	clk.Step(time.Millisecond)
	if second := h.nextCall(t); !slices.Equal(second, keys(6)[1:]) {
		t.Fatalf("second call carried %v, want the 5 items asked within the interval", second)
	}
	h.answer(t)
	for _, c := range outcomes {
		if o := receive(t, c); o.err != nil || o.value != "done:"+o.key {
			t.Errorf("caller %s got %q, %v; want its own result", o.key, o.value, o.err)
		}
	}

	clk.Step(time.Second)
	last := ask(context.Background(), b, "i-last")
	if third := h.nextCall(t); !slices.Equal(third, []string{"i-last"}) {
		t.Fatalf("third call carried %v, want [i-last] at once", third)
	}
	h.answer(t)
	receive(t, last)
}
