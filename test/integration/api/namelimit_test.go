package api_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
)

// The 63-character limit on a NodePool's name holds for new pools only: a pool created
// before an upgrade brought the rule in can still be updated and deleted (its finalizer
// removed), which a rule on every write would refuse, leaving it stuck.
func TestTheNameLimitLetsAnOlderPoolBeUpdated(t *testing.T) {
	env := harness.StartWithoutCRDsT(t)
	ctx := testContext(t)
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config", "crd", "bases", "stratos.sh_nodepools.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	current := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, current); err != nil {
		t.Fatal(err)
	}
	older := current.DeepCopy()
	schema := older.Spec.Versions[0].Schema.OpenAPIV3Schema
	kept := schema.XValidations[:0]
	for _, rule := range schema.XValidations {
		if !strings.Contains(rule.Rule, "metadata.name") {
			kept = append(kept, rule)
		}
	}
	if len(kept) == len(schema.XValidations) {
		t.Fatal("the NodePool CRD has no rule on metadata.name")
	}
	schema.XValidations = kept

	long := strings.Repeat("p", 70)
	install(t, env, older)
	made := patched(t, basePool, "{}", long)
	made.SetFinalizers([]string{"example.com/keep"})
	eventually(t, "the older CRD takes a long name", func() error {
		err := env.Client.Create(ctx, made.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})

	install(t, env, current)
	eventually(t, "the current CRD refuses a new long name", func() error {
		err := env.Client.Create(ctx, patched(t, basePool, "{}", long+"x"))
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "must be at most 63 characters") {
			return nil
		}
		return fmt.Errorf("want the name refused, got %v", err)
	})
	pool := &v1beta1.NodePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: long}, pool); err != nil {
		t.Fatal(err)
	}
	pool.Labels = map[string]string{"team": "platform"}
	if err := env.Client.Update(ctx, pool); err != nil {
		t.Fatalf("updating a pool created before the rule: %v", err)
	}
	pool.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Test", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, pool); err != nil {
		t.Fatalf("writing the status of a pool created before the rule: %v", err)
	}
	if err := env.Client.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		t.Fatal(err)
	}
	pool.Finalizers = nil
	if err := env.Client.Update(ctx, pool); err != nil {
		t.Fatalf("removing the finalizer of a pool created before the rule: %v", err)
	}
}

func install(t *testing.T, env *harness.Env, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd.DeepCopy()}}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls until try succeeds: a CRD's new schema reaches the API server's
// validators a moment after the CRD is written.
func eventually(t *testing.T, what string, try func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(testContext(t), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		last = try()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}
