package runner

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// recordingProxy stands between the operator and moto and counts the operator's AWS
// calls by service and action, such as ec2:CreateFleet, and the failed ones by error
// code. It reads the calls off the wire, so the count does not depend on the operator's
// own accounting, and it survives operator crashes. It records the instances of each
// StartInstances call for the start-call latency.
type recordingProxy struct {
	proxy *httputil.ReverseProxy
	// latency holds each call this long before moto answers it, as EC2 takes time to
	// answer where moto answers at once.
	latency time.Duration

	mu     sync.Mutex
	calls  map[string]int
	errors map[string]int
	starts []startCall
}

// callKey carries a call's name from the request to its response.
type callKey struct{}

func newRecordingProxy(target *url.URL, latency time.Duration) *recordingProxy {
	p := &recordingProxy{calls: map[string]int{}, errors: map[string]int{}, latency: latency}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// The SDK signed the Host it called; moto does not check signatures.
			r.Out.Host = r.In.Host
		},
		ModifyResponse: p.recordFailure,
	}
	return p
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	form := formOf(req, body)
	name := serviceOf(req) + ":" + actionOf(req, form)
	p.mu.Lock()
	p.calls[name]++
	if name == "ec2:StartInstances" {
		p.starts = append(p.starts, startCall{at: time.Now(), ids: numbered(form, "InstanceId")})
	}
	p.mu.Unlock()
	if p.latency > 0 {
		select {
		case <-time.After(p.latency):
		case <-req.Context().Done():
			return
		}
	}
	p.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), callKey{}, name)))
}

// recordFailure counts an error answer by call and error code.
func (p *recordingProxy) recordFailure(resp *http.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return err
	}
	name, _ := resp.Request.Context().Value(callKey{}).(string)
	p.mu.Lock()
	p.errors[name+" "+errorCode(body, resp.StatusCode)]++
	p.mu.Unlock()
	return nil
}

func (p *recordingProxy) counts() (calls, failures map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.calls), maps.Clone(p.errors)
}

func (p *recordingProxy) startCalls() []startCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.starts)
}

// serviceOf reads the service from the request's SigV4 credential scope:
// Credential=AKID/DATE/REGION/SERVICE/aws4_request.
func serviceOf(req *http.Request) string {
	_, scope, ok := strings.Cut(req.Header.Get("Authorization"), "Credential=")
	if !ok {
		return "unsigned"
	}
	scope, _, _ = strings.Cut(scope, ",")
	if parts := strings.Split(scope, "/"); len(parts) == 5 {
		return parts[3]
	}
	return "unknown"
}

// formOf parses a query-protocol body (EC2, IAM), or returns nil.
func formOf(req *http.Request, body []byte) url.Values {
	if !strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil
	}
	return form
}

// actionOf names the call: the form's Action for the query protocol (EC2, IAM), the
// X-Amz-Target's operation for the JSON protocol (SSM, Pricing), else the method and
// path (REST protocols).
func actionOf(req *http.Request, form url.Values) string {
	if action := form.Get("Action"); action != "" {
		return action
	}
	if target := req.Header.Get("X-Amz-Target"); target != "" {
		return target[strings.LastIndex(target, ".")+1:]
	}
	return req.Method + " " + req.URL.Path
}

// numbered returns the values of a query-protocol list: Name.1, Name.2, …
func numbered(form url.Values, name string) []string {
	var values []string
	for key, v := range form {
		if strings.HasPrefix(key, name+".") && len(v) > 0 {
			values = append(values, v[0])
		}
	}
	slices.Sort(values)
	return values
}

var (
	xmlErrorCode  = regexp.MustCompile(`<Code>([^<]+)</Code>`)
	jsonErrorType = regexp.MustCompile(`"__type"\s*:\s*"(?:[^"#]*#)?([^"]+)"`)
)

// errorCode reads the AWS error code of an error answer: <Code> in XML (EC2, IAM),
// __type in JSON (SSM); the HTTP status when there is neither.
func errorCode(body []byte, status int) string {
	for _, re := range []*regexp.Regexp{xmlErrorCode, jsonErrorType} {
		if m := re.FindSubmatch(body); m != nil {
			return string(m[1])
		}
	}
	return http.StatusText(status)
}
