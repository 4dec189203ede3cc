package chart_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/claimtemplate"
	"github.com/stratos-sh/stratos/test/harness"
)

// ownerReferencesPlugin is the admission plugin that lets only who may update an owner's
// finalizers set blockOwnerDeletion on a reference to it.
const ownerReferencesPlugin = "OwnerReferencesPermissionEnforcement"

// installChartRoles installs the chart's CRDs, its namespace, ServiceAccount and roles
// from a rendering, and returns the ServiceAccount's user name.
func installChartRoles(ctx context.Context, t *testing.T, admin client.Client, objects []*unstructured.Unstructured) string {
	t.Helper()
	for _, crd := range ofKind(objects, "CustomResourceDefinition") {
		installCRD(ctx, t, admin, crd)
	}
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNamespace}}); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		applyObjects(ctx, t, admin, ofKind(objects, kind))
	}
	return fmt.Sprintf("system:serviceaccount:%s:%s", releaseNamespace, deployment(t, objects).Spec.Template.Spec.ServiceAccountName)
}

// On an API server that enables OwnerReferencesPermissionEnforcement and authorises by
// RBAC, the chart's ServiceAccount creates a claim as the product makes it (owned by its
// pool, blockOwnerDeletion set); the same roles without the nodepools/finalizers rule
// may create a claim without blockOwnerDeletion but not that one.
func TestClaimCreationPassesOwnerReferencesPermissionEnforcement(t *testing.T) {
	env := harness.StartWithT(t, harness.Options{WithoutCRDs: true, AdmissionPlugins: []string{ownerReferencesPlugin}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := adminClient(t, env)
	objects := render(t, valuesFile(t, map[string]any{"settings": map[string]any{"clusterName": "test", "cloudProvider": "fake"}}))
	operatorUser := installChartRoles(ctx, t, admin, objects)

	pool := &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: v1beta1.NodePoolSpec{Template: v1beta1.NodeClaimTemplate{
			Spec: v1beta1.NodeClaimTemplateSpec{NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"}},
		}},
	}
	if err := admin.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	claim := claimtemplate.NewClaim(pool, v1beta1.DesiredRunning)
	if owner := claim.OwnerReferences; len(owner) != 1 || !ptr.Deref(owner[0].BlockOwnerDeletion, false) {
		t.Fatalf("the product's claim does not block its pool's deletion: %+v", owner)
	}

	// The chart's roles: allowed once the API server's RBAC caches show the binding.
	asOperator := clientAs(t, env, operatorUser)
	created := claim.DeepCopy()
	if err := eventually(ctx, func() error { return asOperator.Create(ctx, created) }); err != nil {
		t.Fatalf("the chart's ServiceAccount could not create the claim: %v", err)
	}
	if got := created.OwnerReferences; len(got) != 1 || got[0].UID != pool.UID {
		t.Errorf("the stored claim's owners are %+v, want pool %s", got, pool.UID)
	}

	// The chart's ClusterRole without nodepools/finalizers, bound to another identity.
	const withoutUser = "stratos-without-finalizers"
	i := slices.IndexFunc(ofKind(objects, "ClusterRole"), func(o *unstructured.Unstructured) bool { return o.GetName() == "stratos" })
	if i < 0 {
		t.Fatal("the chart renders no ClusterRole stratos")
	}
	role := convert[rbacv1.ClusterRole](t, ofKind(objects, "ClusterRole")[i])
	role.ObjectMeta = metav1.ObjectMeta{Name: withoutUser}
	dropped := 0
	for i := range role.Rules {
		before := len(role.Rules[i].Resources)
		role.Rules[i].Resources = slices.DeleteFunc(role.Rules[i].Resources, func(r string) bool { return r == "nodepools/finalizers" })
		dropped += before - len(role.Rules[i].Resources)
	}
	if dropped != 1 {
		t.Fatalf("the chart's ClusterRole grants nodepools/finalizers %d times, want once", dropped)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: withoutUser},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: withoutUser},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: withoutUser}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	without := clientAs(t, env, withoutUser)
	// Its roles are in force once a claim that blocks nothing goes through.
	unblocking := claim.DeepCopy()
	unblocking.OwnerReferences[0].BlockOwnerDeletion = nil
	if err := eventually(ctx, func() error { return without.Create(ctx, unblocking) }); err != nil {
		t.Fatalf("the roles without the finalizers rule could not create a claim that blocks nothing: %v", err)
	}
	err := without.Create(ctx, claim.DeepCopy())
	if !apierrors.IsForbidden(err) {
		t.Fatalf("without nodepools/finalizers, creating the product's claim: %v, want Forbidden by %s", err, ownerReferencesPlugin)
	}
	t.Logf("refused as expected: %v", err)
}

// clientAs is the administrator's client impersonating user.
func clientAs(t *testing.T, env *harness.Env, user string) client.Client {
	t.Helper()
	c, err := client.New(impersonating(env, user, &requestLog{}), client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually retries a write the API server forbids until it is allowed, for up to 30 s:
// the API server's RBAC authoriser reads roles from a cache that shows a new binding a
// moment after it was stored. Any other error ends it.
func eventually(ctx context.Context, write func() error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = write()
		if apierrors.IsForbidden(last) {
			return false, nil
		}
		return true, last
	})
	if err != nil && last != nil {
		return last
	}
	return err
}
