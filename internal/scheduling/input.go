// Package scheduling is Stratos's scheduling simulation. It is pure: given pending pods
// and a snapshot of the cluster (nodes, claims in flight, standby claims, pool templates
// with their instance types), it decides where each pod would go, trying in turn the
// nodes that exist, the claims already coming, the standby claims (a start, not a
// launch), and new claims made from the pools' templates. It applies kube-scheduler's
// predicates with the helpers of k8s.io/component-helpers and never calls a client.
package scheduling

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// Input is a snapshot to simulate on. The simulation does not modify it.
type Input struct {
	// Pods are the pending pods to place.
	Pods []*corev1.Pod
	// Nodes are the schedulable nodes that exist, with the pods bound to them.
	Nodes []Node
	// Claims are the claims coming (launching or starting) and the standby claims.
	Claims []Claim
	// Pools are the templates new claims are made from, in the order to try them.
	Pools []Pool
	// DaemonSets are the pod templates of the cluster's DaemonSets, as pods: those that
	// would run on a new node take their share of it.
	DaemonSets []*corev1.Pod
	// Volumes are what the volumes of pods ask of their nodes, by pod UID: of the pods
	// to place, and of those on nodes and claims, whose volumes count against the
	// nodes' attach limits. A pod absent asks nothing.
	Volumes map[types.UID]volumes.Needs
}

// Node is a node that exists.
type Node struct {
	Node *corev1.Node
	// Pods bound to the node and not finished; they use its capacity and count for
	// topology spread and pod affinity.
	Pods []*corev1.Pod
	// AttachLimits is how many volumes each CSI driver may attach to the node, from its
	// CSINode; a driver absent is unlimited.
	AttachLimits map[string]int64
}

// Claim is a node to come: in flight, or standby until started.
type Claim struct {
	Claim *v1beta1.NodeClaim
	// Standby is true for a standby claim: placing a pod there means starting it.
	Standby bool
	// Labels are those the claim's Node has or will have, instance type and zone included.
	Labels map[string]string
	// Taints are the claim's taints; startup taints and the standby taint are left out,
	// as they do not repel pods for good.
	Taints []corev1.Taint
	// Allocatable is the capacity the node will offer pods.
	Allocatable corev1.ResourceList
	// Pods are those bound to the claim's Node or nominated to the claim already.
	Pods []*corev1.Pod
	// Rank orders standby claims: the lowest first, the cheapest first among equals. A
	// claim warming up runs at once, a stopped one after a start, one still launching
	// later still.
	Rank int
	// PricePerHour is the price of the claim's instance.
	PricePerHour float64
	// AttachLimits is how many volumes each CSI driver may attach to the claim's node:
	// from its CSINode once registered, else its instance type's estimate.
	AttachLimits map[string]int64
}

// Pool is a template for new claims.
type Pool struct {
	Pool *v1beta1.NodePool
	// InstanceTypes are the types the pool's node class offers within the pool's
	// requirements, with their offerings, as the image's default kubelet configuration
	// makes them: the simulation applies the template's (InstanceType.WithKubelet).
	InstanceTypes []*cloudprovider.InstanceType
	// NodesLeft is how many more claims the pool's limits allow; negative is unlimited.
	NodesLeft int
	// Left is the capacity the pool's limits allow, by resource (cpu in millicores,
	// memory in bytes, nvidia.com/gpu and other resources in their units); a resource
	// absent is unlimited. A new claim takes its instance type's capacity of each (0 of
	// a resource the type does not have).
	Left map[corev1.ResourceName]int64
}

// Result is what the simulation decided.
type Result struct {
	// Existing maps pods to the nodes that can take them now.
	Existing map[*corev1.Pod]string
	// InFlight maps pods to the claims already coming that can take them.
	InFlight map[*corev1.Pod]string
	// Starts are the standby claims to start, with the pods they are for.
	Starts []Start
	// Launches are the new claims to create.
	Launches []Launch
	// Unschedulable are the pods nothing can take, with the reason per pool.
	Unschedulable []Unschedulable
	// Order lists the placed pods in the order the simulation placed them. Bound in
	// that order, each pod meets kube-scheduler's filters when it is bound: it is the
	// witness that the placements hold together.
	Order []*corev1.Pod
}

// Start is a standby claim to start.
type Start struct {
	Claim string
	Pods  []*corev1.Pod
}

// Launch is a new claim to create from a pool.
type Launch struct {
	Pool string
	// InstanceTypes are the types that hold all of Pods, cheapest first; the first is
	// the cheapest offering's type.
	InstanceTypes []string
	// Zones and CapacityTypes are set when the pods narrowed them: by node affinity,
	// or by a topology constraint that tied the claim to a zone. Empty: any the pool has.
	Zones         []string
	CapacityTypes []string
	Pods          []*corev1.Pod
	// Requests are the pods' requests summed, DaemonSet overhead left out.
	Requests corev1.ResourceList
	// PricePerHour is the price of the cheapest offering.
	PricePerHour float64
}

// Unschedulable is a pod that no node, claim or pool can take.
type Unschedulable struct {
	Pod *corev1.Pod
	// Reasons say, per pool, which predicate failed.
	Reasons map[string]string
	// Volumes, when set, says why the pod's volumes keep it waiting whatever the node
	// (volumes.Needs.Wait); Reasons is empty then.
	Volumes string
}
