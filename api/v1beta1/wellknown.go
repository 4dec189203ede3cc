package v1beta1

import corev1 "k8s.io/api/core/v1"

// Labels Stratos puts on the Nodes it owns. They mirror the claim for kubectl users.
const (
	// LabelNodePool names the pool a Node belongs to.
	LabelNodePool = Group + "/nodepool"
	// LabelNodeClaim names the claim that owns a Node.
	LabelNodeClaim = Group + "/nodeclaim"
	// LabelState mirrors the claim's phase (for example Standby or Running).
	LabelState = Group + "/state"
	// LabelPrePull, with a claim's name as its value, marks the pod that pulls the
	// pool's warmup images on the claim's Node. It is Stratos's own: never workload.
	LabelPrePull = Group + "/prepull"
	// LabelCapacityType is on-demand or spot.
	LabelCapacityType = Group + "/capacity-type"
)

// Instance labels: what an instance type is, as its Nodes carry it. Pools constrain them
// in their requirements and pods select on them. Numbers are decimal integers, so that
// the Gt and Lt operators apply.
const (
	// LabelInstanceFamily such as m5 or c7g.
	LabelInstanceFamily = Group + "/instance-family"
	// LabelInstanceCategory is the family's letters before the generation: m, c, r, t, g...
	LabelInstanceCategory = Group + "/instance-category"
	// LabelInstanceGeneration is the family's generation number, such as 5 for m5.
	LabelInstanceGeneration = Group + "/instance-generation"
	// LabelInstanceSize such as large or 2xlarge.
	LabelInstanceSize = Group + "/instance-size"
	// LabelInstanceCPU is the number of vCPUs.
	LabelInstanceCPU = Group + "/instance-cpu"
	// LabelInstanceMemory is the memory in MiB.
	LabelInstanceMemory = Group + "/instance-memory"
	// LabelInstanceGPUCount is the number of GPUs; absent on types without.
	LabelInstanceGPUCount = Group + "/instance-gpu-count"
	// LabelInstanceGPUName such as t4 or a10g; absent on types without GPUs.
	LabelInstanceGPUName = Group + "/instance-gpu-name"
	// LabelInstanceHypervisor such as nitro or xen; empty for bare metal.
	LabelInstanceHypervisor = Group + "/instance-hypervisor"
	// LabelInstanceNetworkBandwidth is the baseline network bandwidth in Mbps.
	LabelInstanceNetworkBandwidth = Group + "/instance-network-bandwidth"
)

// InstanceLabelKeys are the instance labels, in the order docs list them.
var InstanceLabelKeys = []string{
	LabelInstanceFamily, LabelInstanceCategory, LabelInstanceGeneration, LabelInstanceSize,
	LabelInstanceCPU, LabelInstanceMemory, LabelInstanceGPUCount, LabelInstanceGPUName,
	LabelInstanceHypervisor, LabelInstanceNetworkBandwidth,
}

// Capacity types, the values of LabelCapacityType.
const (
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeSpot     = "spot"
)

// Taints Stratos manages.
const (
	// TaintStandbyKey keeps pods off a Node while it warms up and while it is stopped.
	TaintStandbyKey = Group + "/standby"
	// TaintReservedKey, with a claim's name as its value, keeps a Node that just started
	// running for the pods provisioning placed on the claim, which tolerate it, until
	// kube-scheduler has bound them (a few seconds at most).
	TaintReservedKey = Group + "/reserved"
)

// StandbyTaint is the taint on warming and standby Nodes.
var StandbyTaint = corev1.Taint{Key: TaintStandbyKey, Effect: corev1.TaintEffectNoSchedule}

// AnnotationTemplateHash on a NodeClaim is the hash of the pool template it was created
// from; with the node class it launched with it tells whether the claim has drifted.
const AnnotationTemplateHash = Group + "/template-hash"

// AnnotationStandbyShapeHash on a NodeClaim created to stand by is the hash of the pool's
// spec.standby requirements and resources it was made with: a standby node of another
// shape than the pool now asks for has drifted.
const AnnotationStandbyShapeHash = Group + "/standby-shape-hash"

// AnnotationPlacedPods on a NodeClaim lists the pods provisioning placed on it, as
// comma-separated namespace/name, so that `stratos explain pod` can name the claim a
// waiting pod was placed on without a write to the pod. It is written in the claim's
// create request or in the patch that asks a standby claim to run (a start replaces the
// list of an earlier run), and a later decision placing more pods on the claim while it
// is on its way adds them with one patch of the claim. The list is bounded
// (MaxPlacedPodsLength): pods placed past the bound are left out of it.
const AnnotationPlacedPods = Group + "/placed-pods"

// MaxPlacedPodsLength bounds the length of AnnotationPlacedPods' value, so that a claim
// of many pods stays a small object in every watch cache: 8 KiB holds about 250 names of
// 30 characters, more than the pods one node takes.
const MaxPlacedPodsLength = 8 << 10

// Annotations users put on pods and Nodes.
const (
	// AnnotationDoNotDisrupt on a pod or a Node blocks voluntary disruption of its Node.
	AnnotationDoNotDisrupt = Group + "/do-not-disrupt"
	// AnnotationDoNotProvision: "true" on a pod keeps Stratos from finding capacity for it.
	AnnotationDoNotProvision = Group + "/do-not-provision"
)

// TerminationFinalizer keeps a deleted NodeClaim until its instance is terminated and
// its Node deleted.
const TerminationFinalizer = Group + "/termination"

// Cloud tags that record ownership, so that a restarted operator can rebuild its state
// and garbage-collect instances that lost their claim.
const (
	TagCluster   = Group + "/cluster"
	TagNodePool  = Group + "/nodepool"
	TagNodeClaim = Group + "/nodeclaim"
)

// RequirementKeys are the node labels a pool's requirements may constrain: those the
// cloud sets from what it sells, the instance labels included. Labels of the pool's own
// choosing are set with the template's labels, not required.
var RequirementKeys = append([]string{
	corev1.LabelInstanceTypeStable,
	corev1.LabelTopologyZone,
	corev1.LabelArchStable,
	corev1.LabelOSStable, // every node Stratos launches is linux
	LabelCapacityType,
}, InstanceLabelKeys...)

// NumericInstanceLabelKeys are the instance labels whose values are whole numbers, which
// the Gt and Lt operators compare.
var NumericInstanceLabelKeys = []string{
	LabelInstanceGeneration, LabelInstanceCPU, LabelInstanceMemory, LabelInstanceGPUCount, LabelInstanceNetworkBandwidth,
}
