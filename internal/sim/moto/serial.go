package moto

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// oneAtATime forwards every request to target, waiting for each answer before it
// forwards the next.
//
// moto's backends are not safe for concurrent requests. Seen in CI: 50 CreateFleet calls
// into one subnet at once made moto's IP allocator raise "ValueError: generator already
// executing" and answer 500 five times; the SDK retried them, and a test that counts the
// provider's EC2 calls saw 55 where it launched 50. EC2 is built for concurrent callers,
// so an emulator race is a false failure, not a finding. Serial costs little: moto's
// Python interpreter lock runs one request at a time anyway.
func oneAtATime(target *url.URL) http.Handler {
	forward := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		forward.ServeHTTP(w, r)
	})
}
