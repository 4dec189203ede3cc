// Package api_test checks the Stratos API against a real kube-apiserver: the CRDs
// install, the samples are accepted with their defaults, and invalid objects are
// rejected with messages a person understands.
package api_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stratos-sh/stratos/test/harness"
)

var env *harness.Env

func TestMain(m *testing.M) {
	var err error
	env, err = harness.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("API server harness started in %s\n", env.StartupTime.Round(time.Millisecond))
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
