package api_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// The keys a pool's template takes for labels, annotations and taints are exactly the
// qualified names Kubernetes takes on a Node, as k8s.io/apimachinery judges them: the
// CRD's rules stand in for a library the API server cannot call from CEL, so a key
// they let through would fail every claim's Node later, and one they refuse would be a
// limit Kubernetes does not have.
func TestTemplateKeysAreTheQualifiedNamesKubernetesTakes(t *testing.T) {
	keys := []string{
		"team", "example.com/team", "a.b-c.d/E_f.g-h", strings.Repeat("n", 63), "example.com/" + strings.Repeat("n", 63),
		strings.Repeat("p", 253) + "/x", strings.Repeat("n", 64), "example.com/" + strings.Repeat("n", 64),
		strings.Repeat("p", 254) + "/x", "Example.com/team", "example.com/", "/team", "-team", "team-", "a/b/c", "owner team",
	}
	places := []struct{ name, patch string }{
		{"label", `spec: {template: {metadata: {labels: {%q: x}}}}`},
		{"annotation", `spec: {template: {metadata: {annotations: {%q: x}}}}`},
		{"taint", `spec: {template: {spec: {taints: [{key: %q, effect: NoSchedule}]}}}`},
	}
	for _, place := range places {
		for i, key := range keys {
			want := len(validation.IsQualifiedName(key)) == 0
			t.Run(fmt.Sprintf("%s/%d", place.name, i), func(t *testing.T) {
				ctx := testContext(t)
				obj := patched(t, basePool, fmt.Sprintf(place.patch, key), fmt.Sprintf("qualified-%s-%d", place.name, i))
				err := env.Client.Create(ctx, obj)
				if err == nil {
					t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				}
				if got := err == nil; got != want {
					t.Fatalf("%s key %q: accepted %v, want %v (IsQualifiedName: %v; API server: %v)", place.name, key, got, want, validation.IsQualifiedName(key), err)
				}
			})
		}
	}
}
