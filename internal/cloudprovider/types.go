package cloudprovider

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// InstanceState is the state the cloud reports for an instance, as EC2 names them.
type InstanceState string

const (
	StatePending      InstanceState = "pending"
	StateRunning      InstanceState = "running"
	StateStopping     InstanceState = "stopping"
	StateStopped      InstanceState = "stopped"
	StateShuttingDown InstanceState = "shutting-down"
	StateTerminated   InstanceState = "terminated"
)

// Instance is what the cloud knows of one instance.
type Instance struct {
	ID         string
	ProviderID string
	// Type is the instance type, such as m5.large.
	Type string
	// ImageID is the machine image the instance was launched from; empty where the
	// cloud has none.
	ImageID string
	// InstanceProfile is the IAM instance profile the instance was launched with (EC2);
	// empty where the cloud has none or does not say.
	InstanceProfile string
	// EndedAtLaunch says why the cloud ended the instance right after accepting its
	// launch, for a reason that a relaunch with the same settings meets again (on EC2,
	// an encrypted volume whose KMS key the instance cannot use); empty otherwise.
	EndedAtLaunch string
	Zone          string
	CapacityType  string
	Architecture  string
	State         InstanceState
	// Tags include the ownership tags (cluster, pool, claim) Stratos sets at launch.
	Tags       map[string]string
	LaunchTime time.Time
	// NotOwned: the instance exists but does not carry the cluster's ownership tag (it
	// lost it, or the operator runs under another cluster name). The API's
	// DescribeInstances reports such an instance with NotOwned set, so that it is told
	// from one the cloud does not know; the CloudProvider answers ErrNotOwned for it.
	NotOwned bool
	// RefusedOfferings, on an instance Create returns, are offerings the cloud tried
	// first and refused for lack of capacity before it launched this one (an EC2 fleet
	// tries its overrides in turn); the CloudProvider marks them unavailable.
	RefusedOfferings []OfferingKey
}

// CreateRequest asks for one instance on behalf of a NodeClaim.
type CreateRequest struct {
	// ClientToken makes the call idempotent: a second call with the same token returns
	// the instance the first one launched instead of launching another. Stratos uses the
	// NodeClaim's UID.
	ClientToken string
	// NodeClass is the resolved node class object of the provider's kind.
	NodeClass client.Object
	// Requirements the instance type, zone, architecture and capacity type must meet.
	Requirements []corev1.NodeSelectorRequirement
	// Requests must fit in the allocatable resources of the chosen instance type.
	Requests corev1.ResourceList
	// Labels and Taints the kubelet registers the Node with (startup taints included).
	Labels map[string]string
	Taints []corev1.Taint
	// Kubelet is the kubelet configuration the node boots with (the claim's, from its
	// pool's template); nil keeps the image's defaults.
	Kubelet *v1beta1.KubeletConfiguration
	// Tags recorded on the instance; they carry ownership.
	Tags map[string]string
	// Unavailable are offerings the cloud refused for lack of capacity a short while ago;
	// the launch must not use them. The CloudProvider fills it from its
	// UnavailableOfferings, so callers leave it empty.
	Unavailable []OfferingKey
}

// InstanceType is a shape of machine the cloud offers.
type InstanceType struct {
	Name         string
	Architecture string
	// Capacity of the machine: cpu, memory, pods, ephemeral-storage, extended resources.
	Capacity corev1.ResourceList
	// Overhead is what the kubelet keeps back from the capacity with the image's default
	// configuration; Allocatable is the rest. WithKubelet applies a pool's configuration.
	Overhead Overhead
	// Offerings are where and how the type can be bought, with prices.
	Offerings []Offering
	// AttachLimits estimates how many volumes each CSI driver may attach to a node of
	// the type, by driver name, for nodes whose CSINode is not registered yet; nil when
	// the cloud does not say (unlimited).
	AttachLimits map[string]int64
	// Attributes are the well-known instance labels of the type (v1beta1.LabelInstance*:
	// family, category, generation, size, cpu, memory, GPUs, hypervisor, network
	// bandwidth), as its Nodes carry them; absent keys do not apply to the type.
	// InstanceFacts.Attributes makes them; instance-cpu is always there, which tells
	// the lifecycle controller whether a Node has them all.
	Attributes map[string]string
}

// Offering is an instance type in one zone with one capacity type.
type Offering struct {
	Zone         string
	CapacityType string
	// PricePerHour in US dollars.
	PricePerHour float64
	// StoppedPricePerHour is what an instance of the offering costs while it is stopped,
	// in US dollars: its disks, estimated by the cloud from the node class (see
	// DisksPricePerHour). Standby nodes cost this instead of PricePerHour.
	StoppedPricePerHour float64
	// Available is false when the cloud has no capacity for it now.
	Available bool
}

// OfferingKey names an offering: an instance type in one zone with one capacity type.
type OfferingKey struct {
	InstanceType string `json:"instanceType"`
	Zone         string `json:"zone"`
	CapacityType string `json:"capacityType"`
}

func (k OfferingKey) String() string {
	return k.InstanceType + " " + k.CapacityType + " in " + k.Zone
}

// Key is the key of offering o of type t.
func (t *InstanceType) Key(o Offering) OfferingKey {
	return OfferingKey{InstanceType: t.Name, Zone: o.Zone, CapacityType: o.CapacityType}
}

// Allocatable is the capacity left for pods: of each resource of the capacity, what the
// overhead does not keep back, never below zero, as the kubelet computes it.
func (t *InstanceType) Allocatable() corev1.ResourceList {
	kept := t.Overhead.Total()
	allocatable := make(corev1.ResourceList, len(t.Capacity))
	for name, capacity := range t.Capacity {
		left := capacity.DeepCopy()
		if q, ok := kept[name]; ok {
			left.Sub(q)
		}
		if left.Sign() < 0 {
			left = *resource.NewQuantity(0, capacity.Format)
		}
		allocatable[name] = left
	}
	return allocatable
}

// LeavesRoomForPods reports whether a node of the type has CPU and memory left for pods
// once its overhead is kept back. The kubelet starts with reservations and eviction
// thresholds as large as the machine and reports an allocatable of zero, and a node
// like that runs no pod, so such a type is never chosen, not even for a standby claim
// that asks for no room. A resource the capacity does not list is not judged here
// (Fits judges requests for it).
func (t *InstanceType) LeavesRoomForPods() bool {
	allocatable := t.Allocatable()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, listed := t.Capacity[name]; listed && allocatable.Name(name, resource.DecimalSI).Sign() <= 0 {
			return false
		}
	}
	return true
}

// HasRoomFor reports whether a node of type t whose kubelet runs with configuration k
// leaves CPU and memory for pods and has room for requests: the test every choice of
// an instance type to launch passes.
func HasRoomFor(t *InstanceType, k *v1beta1.KubeletConfiguration, requests corev1.ResourceList) bool {
	shaped := t.WithKubelet(k)
	return shaped.LeavesRoomForPods() && Fits(shaped.Allocatable(), requests)
}

// Cheapest returns the cheapest available offering that keep accepts, if any.
func (t *InstanceType) Cheapest(keep func(Offering) bool) (Offering, bool) {
	var best Offering
	found := false
	for _, o := range t.Offerings {
		if !o.Available || (keep != nil && !keep(o)) {
			continue
		}
		if !found || o.PricePerHour < best.PricePerHour {
			best, found = o, true
		}
	}
	return best, found
}
