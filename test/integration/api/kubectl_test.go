package api_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/harness"
)

// What a user does first: install the CRDs and the samples with kubectl, then look at them.
func TestKubectlInstallsTheCRDsAndSamplesAndShowsUsefulColumns(t *testing.T) {
	bin, err := harness.EnsureTools("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bare := harness.StartWithoutCRDsT(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := bare.Kubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	kubectl("apply", "-f", "config/crd/bases")
	kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/nodepools.stratos.sh", "crd/nodeclaims.stratos.sh", "crd/fakenodeclasses.stratos.sh", "crd/ec2nodeclasses.stratos.sh")
	kubectl("apply", "-f", "config/samples")

	ctx := testContext(t)
	claim := &v1beta1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "general-abc12"},
		Spec: v1beta1.NodeClaimSpec{
			NodePool:     "general",
			NodeClassRef: v1beta1.NodeClassReference{Kind: "FakeNodeClass", Name: "default"},
			DesiredState: v1beta1.DesiredStandby,
		},
	}
	if err := bare.Client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Status = v1beta1.NodeClaimStatus{
		Phase: v1beta1.PhaseStandby, InstanceID: "i-0123456789abcdef0", InstanceType: "m5.large",
		Zone: "fake-1a", CapacityType: "on-demand", NodeName: "ip-10-0-0-7.fake.internal",
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
	}
	if err := bare.Client.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}

	pools := kubectl("get", "nodepools.stratos.sh")
	assertColumns(t, pools, "NAME", "NODECLASS", "TARGET", "STANDBY", "RUNNING", "NODES", "READY", "AGE")
	assertRow(t, pools, "general", "default")
	assertColumns(t, kubectl("get", "snp", "-o", "wide"), "WEIGHT", "PAUSED")

	claims := kubectl("get", "nodeclaims.stratos.sh")
	assertColumns(t, claims, "NAME", "POOL", "PHASE", "DESIRED", "TYPE", "ZONE", "NODE", "AGE")
	assertRow(t, claims, "general-abc12", "general", "Standby", "Standby", "m5.large", "fake-1a", "ip-10-0-0-7.fake.internal")
	assertRow(t, kubectl("get", "snc", "-o", "wide"), "general-abc12", "i-0123456789abcdef0", "on-demand")

	both := kubectl("get", "nodepools.stratos.sh,nodeclaims.stratos.sh")
	for _, name := range []string{"nodepool.stratos.sh/general", "nodepool.stratos.sh/office-hours", "nodeclaim.stratos.sh/general-abc12"} {
		if !strings.Contains(both, name) {
			t.Errorf("kubectl get nodepools.stratos.sh,nodeclaims.stratos.sh does not list %s:\n%s", name, both)
		}
	}
	assertRow(t, kubectl("get", "stratos"), "nodeclaim.stratos.sh/general-abc12")
}

// assertColumns checks the header line of kubectl get output.
func assertColumns(t *testing.T, out string, columns ...string) {
	t.Helper()
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	for _, column := range columns {
		if !slices.Contains(header, column) {
			t.Errorf("column %s missing from %v:\n%s", column, header, out)
		}
	}
}

// assertRow checks that one line of kubectl get output holds every value.
func assertRow(t *testing.T, out string, values ...string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		found := true
		for _, v := range values {
			found = found && slices.Contains(fields, v)
		}
		if found {
			return
		}
	}
	t.Errorf("no row holds %v:\n%s", values, out)
}
