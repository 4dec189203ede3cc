package simprovider

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// ClusterOptions describe the CAPI cluster CreateCluster makes of the simulator's own.
type ClusterOptions struct {
	// Namespace holds the cluster's objects; it is created if missing.
	Namespace string
	// Name of the Cluster, and of its SimCluster and SimControlPlane.
	Name string
	// Kubeconfig reaches the simulator's API server, the workload cluster: CAPI's
	// cluster cache reads the Nodes through it, and the control plane endpoint is its
	// server's.
	Kubeconfig []byte
	// KubernetesVersion the control plane reports, such as v1.37.0.
	KubernetesVersion string
	// Zones the cluster offers as failure domains; empty means every zone of the cloud.
	Zones []string
}

// CreateCluster makes the simulator's cluster a CAPI cluster of itself: the namespace,
// a SimCluster and a SimControlPlane, the Cluster that refers to them, and the
// <name>-kubeconfig Secret (as a control plane provider writes it) that points CAPI back
// at the same API server. Objects that exist are left as they are.
func CreateCluster(ctx context.Context, c client.Client, o ClusterOptions) (*clusterv1.Cluster, error) {
	endpoint, err := endpointOf(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: o.Name}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: o.Namespace, Name: name, Labels: labels}
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: meta(o.Name),
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimCluster, Name: o.Name},
			ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimControlPlane, Name: o.Name},
		},
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}},
		&v1alpha1.SimCluster{ObjectMeta: meta(o.Name), Spec: v1alpha1.SimClusterSpec{ControlPlaneEndpoint: endpoint, Zones: o.Zones}},
		&v1alpha1.SimControlPlane{ObjectMeta: meta(o.Name), Spec: v1alpha1.SimControlPlaneSpec{Version: o.KubernetesVersion}},
		&corev1.Secret{
			ObjectMeta: meta(o.Name + "-kubeconfig"),
			Type:       clusterv1.ClusterSecretType,
			Data:       map[string][]byte{"value": o.Kubeconfig},
		},
		cluster,
	}
	for _, obj := range objects {
		if err := createIfMissing(ctx, c, obj); err != nil {
			return nil, err
		}
	}
	return cluster, nil
}

// endpointOf is the host and port of the server of a kubeconfig's current context.
func endpointOf(kubeconfig []byte) (clusterv1.APIEndpoint, error) {
	config, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return clusterv1.APIEndpoint{}, fmt.Errorf("reading the workload cluster's kubeconfig: %w", err)
	}
	server, err := url.Parse(config.Host)
	if err != nil {
		return clusterv1.APIEndpoint{}, fmt.Errorf("the kubeconfig's server %q: %w", config.Host, err)
	}
	host, portText, err := net.SplitHostPort(server.Host)
	if err != nil {
		// No port: the scheme's.
		host, portText = server.Host, "443"
		if server.Scheme == "http" {
			portText = "80"
		}
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		return clusterv1.APIEndpoint{}, fmt.Errorf("the kubeconfig's server %q: bad port", config.Host)
	}
	return clusterv1.APIEndpoint{Host: host, Port: int32(port)}, nil
}

// TemplateOptions describe the templates CreateTemplates makes.
type TemplateOptions struct {
	Namespace string
	// Name of both the SimMachineTemplate and the SimConfigTemplate.
	Name string
	// Config is the SimConfigTemplate's spec (taints and kubelet flags for every
	// machine). A ClusterAPINodeClass's provider fills in each machine's own node labels
	// and taints only where the template has a join configuration, and an empty one is
	// not written (omitzero): give it at least one flag or taint, as the simulator's
	// runner does, or Nodes register untainted.
	Config v1alpha1.SimConfigSpec
}

// Templates name what CreateTemplates made, as a ClusterAPINodeClass refers to them.
type Templates struct {
	Bootstrap      v1beta1.ClusterAPITemplateReference
	Infrastructure v1beta1.ClusterAPITemplateReference
}

// CreateTemplates makes a SimMachineTemplate and a SimConfigTemplate of one name, for
// Machines whose infrastructure is a SimMachine and whose bootstrap is a SimConfig.
// Templates that exist are left as they are.
func CreateTemplates(ctx context.Context, c client.Client, o TemplateOptions) (Templates, error) {
	machine := &v1alpha1.SimMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name},
		Spec:       v1alpha1.SimMachineTemplateSpec{Template: v1alpha1.SimMachineTemplateResource{Spec: v1alpha1.SimMachineSpec{Online: ptr.To(true)}}},
	}
	config := &v1alpha1.SimConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name},
		Spec:       v1alpha1.SimConfigTemplateSpec{Template: v1alpha1.SimConfigTemplateResource{Spec: o.Config}},
	}
	for _, obj := range []client.Object{machine, config} {
		if err := createIfMissing(ctx, c, obj); err != nil {
			return Templates{}, err
		}
	}
	return Templates{
		Bootstrap:      v1beta1.ClusterAPITemplateReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimConfigTemplate, Name: o.Name},
		Infrastructure: v1beta1.ClusterAPITemplateReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimMachineTemplate, Name: o.Name},
	}, nil
}

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}
