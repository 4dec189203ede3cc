package clusterapi

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// Name is the provider's name, as --cloud-provider takes it.
const Name = "clusterapi"

// AnnotationClientToken on a Machine is the client token of the launch that created it:
// a launch redone with the same token finds its Machine, and one with another token
// does not take a Machine that is not its own.
const AnnotationClientToken = v1beta1.Group + "/client-token"

// AddToScheme adds the CAPI types the provider reads and writes (Machine, Cluster) to a
// scheme; the client given to New must have them.
func AddToScheme(s *runtime.Scheme) error { return clusterv1.AddToScheme(s) }

// Options configure the provider.
type Options struct {
	// ClusterName is Stratos's --cluster-name: the value of the stratos.sh/cluster label
	// that marks the Machines as the cluster's own.
	ClusterName string
	// Client writes every object and reads Machines. Reads through the manager's cache
	// are right: Machines are read often (every claim's instance, garbage collection),
	// and a Machine the cache has not seen yet is covered by the lifecycle controller's
	// grace for fresh instances. Its scheme must have the CAPI types (AddToScheme).
	Client client.Client
	// Reader reads templates, CRDs, Clusters and a Machine that Create found already
	// there, straight from the API server. Templates and CRDs are read only when a
	// machine is launched or a class checked, so a cache of every template kind (an
	// informer per kind, and list and watch rights on each) would cost more than it
	// saves; and the Machine of a redone launch must be seen even if it was created a
	// moment ago. Nil: Client. The manager's GetAPIReader is meant.
	Reader client.Reader
	// Powers are the power interfaces by infrastructure machine kind; nil: DefaultPowers.
	Powers Powers
}

// Provider is the Cluster API cloud: instances are Machines.
type Provider struct {
	clusterName string
	client      client.Client
	reader      client.Reader
	// readsAround: reader is not client, so it sees what client's cache may not yet.
	readsAround bool
	powers      Powers
	versions    versionCache
}

var _ cloudprovider.API = (*Provider)(nil)

// New returns the provider.
func New(opts Options) (*Provider, error) {
	if opts.Client == nil {
		return nil, fmt.Errorf("clusterapi: a client is required")
	}
	if opts.ClusterName == "" {
		return nil, fmt.Errorf("clusterapi: the cluster name is required: it marks the cluster's Machines")
	}
	p := &Provider{clusterName: opts.ClusterName, client: opts.Client, reader: opts.Reader, readsAround: opts.Reader != nil, powers: opts.Powers}
	if p.reader == nil {
		p.reader = opts.Client
	}
	if p.powers == nil {
		p.powers = DefaultPowers()
	}
	return p, nil
}

// Name is clusterapi.
func (p *Provider) Name() string { return Name }

// InstanceID is the ID of the instance that is the Machine namespace/name.
func InstanceID(namespace, name string) string { return namespace + "/" + name }

// machineKey is the Machine of an instance ID; ok is false for an ID that names none.
func machineKey(id string) (client.ObjectKey, bool) {
	namespace, name, ok := strings.Cut(id, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: namespace, Name: name}, true
}

// asClass is the request's node class, which must be a ClusterAPINodeClass.
func asClass(obj client.Object) (*v1beta1.ClusterAPINodeClass, error) {
	class, ok := obj.(*v1beta1.ClusterAPINodeClass)
	if !ok || class == nil {
		return nil, cloudprovider.NewError(cloudprovider.CodeInvalidParameter, cloudprovider.OpCreate, "",
			"the clusterapi provider launches from a ClusterAPINodeClass, not %T", obj)
	}
	return class, nil
}
