package api_test

import (
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/test/harness"
)

func TestEverySampleIsAccepted(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found in config/samples: %v", err)
	}
	for _, file := range files {
		for _, obj := range decodeFile(t, file) {
			t.Run(filepath.Base(file)+"/"+obj.GetName(), func(t *testing.T) {
				ctx := testContext(t)
				obj.SetName("sample-" + obj.GetName())
				// Strict, as kubectl validates: a field in a place the API does not have
				// is refused rather than dropped.
				if err := env.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
					t.Fatalf("the API server rejected the sample: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			})
		}
	}
}
