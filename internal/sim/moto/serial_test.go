package moto

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// While moto answers one request, a second waits at the proxy: it reaches moto only
// once the first is answered.
func TestTheProxyPassesMotoOneRequestAtATime(t *testing.T) {
	atMoto := make(chan struct{}, 2)
	answer := make(chan struct{})
	moto := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atMoto <- struct{}{}
		<-answer
	}))
	defer moto.Close()
	var once sync.Once
	answerAll := func() { once.Do(func() { close(answer) }) }
	target, err := url.Parse(moto.URL)
	if err != nil {
		t.Fatal(err)
	}
	atProxy := make(chan struct{}, 2)
	serial := oneAtATime(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atProxy <- struct{}{}
		serial.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	defer answerAll() // before the servers' Close, which waits for their handlers
	endpoint := proxy.URL

	var wg sync.WaitGroup
	errs := make(chan error, 2) // not t.Error: a failed test returns before the requests end
	for range 2 {
		wg.Go(func() {
			resp, err := http.Get(endpoint)
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
		})
	}
	within := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10s", what)
		}
	}
	within(atProxy, "first request at the proxy")
	within(atProxy, "second request at the proxy")
	within(atMoto, "first request at moto")
	// Both requests are in the proxy and one is at moto. Were the proxy not serial, the
	// second would reach moto at once; give it ample time to.
	select {
	case <-atMoto:
		t.Fatal("a second request reached moto while the first was unanswered")
	case <-time.After(300 * time.Millisecond):
	}
	answerAll()
	within(atMoto, "second request at moto after the first was answered")
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
