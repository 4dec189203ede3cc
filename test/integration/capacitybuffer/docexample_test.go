package capacitybuffer_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1beta1 "github.com/stratos-sh/stratos/api/autoscaling/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
	"github.com/stratos-sh/stratos/test/manifest"
)

// The example of docs/buffers.md is what the page says it is: the API server takes it
// under strict field validation, the Deployment's buffer resolves to 2 chunks (20% of
// 10) and to 4 once the Deployment is scaled to 20, and the batch buffer's limits cut its
// 6 chunks of 2 CPUs to 4.
func TestTheDocsExampleResolvesAsDescribed(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "buffers.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, found := strings.Cut(string(page), "\n## Example\n")
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(example, -1)
	if !found || len(blocks) != 1 {
		t.Fatalf("docs/buffers.md's section Example has %d yaml blocks, want one", len(blocks))
	}
	objects, err := manifest.Decode(strings.NewReader(blocks[0][1]))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	for _, obj := range objects {
		obj.SetNamespace(f.ns) // the page's namespace is shop
		if err := env.Client.Create(f.ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			t.Fatalf("the API server refused the example's %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	f.eventually("the Deployment's buffer to resolve to 2 chunks", func() bool {
		return f.readyWith("web", metav1.ConditionTrue, "Resolved") && f.replicas("web") == 2
	})
	f.eventually("the batch buffer to resolve to 4 chunks, limited", func() bool {
		return f.readyWith("batch", metav1.ConditionTrue, "Resolved") && f.replicas("batch") == 4 && capacitybufferLimited(f, "batch")
	})
	if got := f.buffer("web").Status.PodTemplateRef; got == nil || got.Name != "capacitybuffer-web" {
		t.Errorf("the Deployment's buffer resolved to template %+v, the page says capacitybuffer-web", got)
	}
	if got := f.buffer("batch").Status.ProvisioningStrategy; got == nil || *got != autoscalingv1beta1.StrategyStandbyCapacity {
		t.Errorf("the batch buffer's strategy is %v, want %s", got, autoscalingv1beta1.StrategyStandbyCapacity)
	}
	scale(f, "web", 20)
	f.eventually("the Deployment's buffer to follow the scale to 4 chunks", func() bool { return f.replicas("web") == 4 })
}
