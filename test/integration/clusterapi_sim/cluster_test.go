package clusterapisim_test

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
)

// kubeconfig is an administrator's kubeconfig of the test's API server.
func (e *simEnv) kubeconfig() []byte {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), "kubeconfig")
	if err := e.env.Kubeconfig(path); err != nil {
		e.t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		e.t.Fatal(err)
	}
	return data
}

// CreateCluster makes the simulator's API server a CAPI cluster of itself: the
// SimCluster is provisioned with the fake cloud's zones as failure domains and the API
// server as endpoint, the SimControlPlane initialized, and the kubeconfig Secret is
// where CAPI looks for it.
func TestCreateClusterMakesAProvisionedCluster(t *testing.T) {
	e := start(t)
	kubeconfig := e.kubeconfig()
	cluster, err := simprovider.CreateCluster(e.ctx, e.c, simprovider.ClusterOptions{
		Namespace: "capi", Name: "sim", Kubeconfig: kubeconfig, KubernetesVersion: "v1.37.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ref := cluster.Spec.InfrastructureRef; ref.APIGroup != v1alpha1.Group || ref.Kind != "SimCluster" || ref.Name != "sim" {
		t.Errorf("infrastructureRef = %+v, want the SimCluster sim", ref)
	}
	if ref := cluster.Spec.ControlPlaneRef; ref.APIGroup != v1alpha1.Group || ref.Kind != "SimControlPlane" || ref.Name != "sim" {
		t.Errorf("controlPlaneRef = %+v, want the SimControlPlane sim", ref)
	}

	infra := &v1alpha1.SimCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "sim"}}
	e.eventually("the SimCluster is provisioned", func() bool {
		return e.get(infra) && ptr.Deref(infra.Status.Initialization.Provisioned, false)
	})
	var domains []string
	for _, fd := range infra.Status.FailureDomains {
		domains = append(domains, fd.Name)
	}
	if !slices.Equal(domains, fakecloud.DefaultZones()) {
		t.Errorf("failure domains = %v, want the fake cloud's zones %v", domains, fakecloud.DefaultZones())
	}
	server, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if ep := infra.Spec.ControlPlaneEndpoint; ep.Host == "" || ep.Port == 0 || !containsHostPort(server.Host, ep) {
		t.Errorf("control plane endpoint = %+v, want the kubeconfig's server %s", ep, server.Host)
	}

	cp := &v1alpha1.SimControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "sim"}}
	e.eventually("the SimControlPlane is initialized", func() bool {
		return e.get(cp) && ptr.Deref(cp.Status.Initialization.ControlPlaneInitialized, false)
	})
	if cp.Status.Version != "v1.37.0" || len(cp.Status.Versions) != 1 || cp.Status.Versions[0].Version != "v1.37.0" {
		t.Errorf("control plane version %q, versions %v: want v1.37.0", cp.Status.Version, cp.Status.Versions)
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "capi", Name: "sim-kubeconfig"}}
	if !e.get(secret) {
		t.Fatal("no sim-kubeconfig Secret")
	}
	if secret.Type != clusterv1.ClusterSecretType || secret.Labels[clusterv1.ClusterNameLabel] != "sim" || string(secret.Data["value"]) != string(kubeconfig) {
		t.Errorf("kubeconfig Secret: type %s, labels %v: want %s, the cluster label and the kubeconfig under value",
			secret.Type, secret.Labels, clusterv1.ClusterSecretType)
	}

	// Again: what exists is left as it is.
	if _, err := simprovider.CreateCluster(e.ctx, e.c, simprovider.ClusterOptions{
		Namespace: "capi", Name: "sim", Kubeconfig: kubeconfig, KubernetesVersion: "v1.37.0",
	}); err != nil {
		t.Errorf("creating the cluster again: %v", err)
	}
}

// containsHostPort reports whether the server URL is at the endpoint's host and port.
func containsHostPort(server string, ep clusterv1.APIEndpoint) bool {
	u, err := url.Parse(server)
	return err == nil && u.Hostname() == ep.Host && u.Port() == strconv.Itoa(int(ep.Port))
}

// CreateTemplates makes a SimMachineTemplate and a SimConfigTemplate and names them as a
// ClusterAPINodeClass refers to them.
func TestCreateTemplates(t *testing.T) {
	e := start(t)
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "templates"}})
	config := v1alpha1.SimConfigSpec{JoinConfiguration: v1alpha1.JoinConfiguration{NodeRegistration: v1alpha1.NodeRegistrationOptions{
		Taints: []corev1.Taint{batchTaint},
	}}}
	refs, err := simprovider.CreateTemplates(e.ctx, e.c, simprovider.TemplateOptions{Namespace: "templates", Name: "workers", Config: config})
	if err != nil {
		t.Fatal(err)
	}
	if r := refs.Infrastructure; r.APIGroup != v1alpha1.Group || r.Kind != "SimMachineTemplate" || r.Name != "workers" {
		t.Errorf("infrastructure template reference = %+v", r)
	}
	if r := refs.Bootstrap; r.APIGroup != v1alpha1.Group || r.Kind != "SimConfigTemplate" || r.Name != "workers" {
		t.Errorf("bootstrap template reference = %+v", r)
	}
	machineTemplate := &v1alpha1.SimMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "workers"}}
	if !e.get(machineTemplate) {
		t.Fatal("no SimMachineTemplate")
	}
	if online := machineTemplate.Spec.Template.Spec.Online; online == nil || !*online {
		t.Errorf("template spec.online = %v, want the default true", online)
	}
	configTemplate := &v1alpha1.SimConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "templates", Name: "workers"}}
	if !e.get(configTemplate) {
		t.Fatal("no SimConfigTemplate")
	}
	if taints := configTemplate.Spec.Template.Spec.JoinConfiguration.NodeRegistration.Taints; len(taints) != 1 || taints[0].Key != batchTaint.Key {
		t.Errorf("template taints = %v, want %v", taints, batchTaint)
	}
}

// A SimCluster limited to some zones offers only those; one naming a zone the cloud does
// not have is not provisioned and says why.
func TestSimClusterZones(t *testing.T) {
	e := start(t)
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "zones"}})
	some := &v1alpha1.SimCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "zones", Name: "some"}, Spec: v1alpha1.SimClusterSpec{Zones: []string{"fake-1a", "fake-1c"}}}
	unknown := &v1alpha1.SimCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "zones", Name: "unknown"}, Spec: v1alpha1.SimClusterSpec{Zones: []string{"fake-1a", "mars-1a"}}}
	e.create(some)
	e.create(unknown)
	e.eventually("the SimCluster of some zones is provisioned", func() bool {
		return e.get(some) && ptr.Deref(some.Status.Initialization.Provisioned, false)
	})
	if len(some.Status.FailureDomains) != 2 || some.Status.FailureDomains[0].Name != "fake-1a" || some.Status.FailureDomains[1].Name != "fake-1c" {
		t.Errorf("failure domains = %v, want fake-1a and fake-1c", some.Status.FailureDomains)
	}
	e.eventually("the SimCluster of an unknown zone says why", func() bool {
		if !e.get(unknown) {
			return false
		}
		c := meta.FindStatusCondition(unknown.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == simprovider.ReasonUnknownZones
	})
	if ptr.Deref(unknown.Status.Initialization.Provisioned, false) {
		t.Error("a SimCluster naming an unknown zone is provisioned")
	}
}
