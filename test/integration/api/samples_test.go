package api_test

import (
	"path/filepath"
	"testing"

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
				if err := env.Client.Create(ctx, obj); err != nil {
					t.Fatalf("the API server rejected the sample: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			})
		}
	}
}
