package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool says what nodes look like and how many to keep: the template every NodeClaim
// of the pool is made from, limits, the warm-pool target, disruption rules and time windows.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=snp,categories=stratos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NodeClass",type=string,JSONPath=`.spec.template.spec.nodeClassRef.name`
// +kubebuilder:printcolumn:name="Target",type=integer,JSONPath=`.status.standbyTarget`,description="Standby nodes the pool aims for now"
// +kubebuilder:printcolumn:name="Standby",type=integer,JSONPath=`.status.nodes.standby`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.nodes.running`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes.total`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.spec.weight`,priority=1
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.spec.paused`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || size(self.metadata.name) <= 63",optionalOldSelf=true,message="a NodePool's name must be at most 63 characters: it is the value of its nodes' stratos.sh/nodepool label"
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodePoolSpec `json:"spec"`
	// +optional
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolSpec is the desired shape and size of a pool.
type NodePoolSpec struct {
	// Template is what every node of the pool looks like.
	// +required
	Template NodeClaimTemplate `json:"template"`

	// Limits cap the pool, by resource name: nodes is the number of claims; cpu,
	// memory, nvidia.com/gpu or any other name adds up that resource in the claims'
	// capacity (not allocatable), a claim whose instance type lacks it counting 0. They
	// count every claim of the pool that is not being deleted, whatever its phase
	// (launching, warming, standby, running, draining), by its instance's capacity once
	// the Node reports it and before then by the capacity of the cheapest instance type
	// the claim may launch as. Provisioning, the warm pool, a window's running minimum
	// and replacements of drifted or expired nodes all stay within them. Unset limits do
	// not cap.
	// +optional
	Limits Limits `json:"limits,omitempty"`

	// Standby is the warm pool: nodes launched, initialised and stopped ahead of demand.
	// +optional
	// +kubebuilder:default={}
	Standby Standby `json:"standby,omitempty"`

	// Disruption says when and how nodes of the pool are given back.
	// +optional
	// +kubebuilder:default={}
	Disruption Disruption `json:"disruption,omitempty"`

	// Repair replaces nodes that stopped being healthy.
	// +optional
	// +kubebuilder:default={}
	Repair Repair `json:"repair,omitempty"`

	// Windows override the pool's targets at known times, such as office hours. Unset:
	// the spec's targets hold at all times.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Windows []Window `json:"windows,omitempty"`

	// Weight orders pools when several could serve a pod: the highest weight is tried
	// first. Defaults to 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight,omitempty"`

	// Paused freezes the pool's capacity as it is. No claim is created, started, given
	// back or removed for it by provisioning, the pool controller or disruption; its
	// claims' instances are not launched, started or stopped, drains wait, and no
	// launch, registration, initialization, warmup or start timeout removes or stops a
	// claim (one that passes meanwhile applies once the pool is resumed). What needs no
	// such change goes on: Nodes register and turn Ready, starts and stops under way
	// complete, and claims follow in their phases. Deleting a claim or the pool, or the
	// kill switch, still terminates nodes; a claim whose instance is gone is still
	// removed; garbage collection still terminates leaked instances. Defaults to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// KillSwitch drains every node of the pool, standby included, within its
	// template's terminationGracePeriod and terminates it; the pool stays defined.
	// Defaults to false.
	// +optional
	KillSwitch bool `json:"killSwitch,omitempty"`
}

// NodeClaimTemplate is the part of a NodeClaim that comes from its pool, shaped as
// Karpenter v1's: the node's metadata, and the claim's spec.
type NodeClaimTemplate struct {
	// Metadata is what every node of the pool carries: labels and annotations. Unset:
	// none beyond the ones Stratos and the cloud set.
	// +optional
	TemplateObjectMeta `json:"metadata,omitempty"`

	// Spec is what every NodeClaim of the pool asks for.
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// TemplateObjectMeta is the metadata a pool gives its nodes.
type TemplateObjectMeta struct {
	// Labels added to every node of the pool. Keys under stratos.sh/ and the labels the
	// cloud sets (instance type, zone, architecture, OS, hostname) are reserved; constrain
	// those with requirements instead. Unset: none beyond the ones Stratos and the cloud set.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('stratos.sh/') && !(k in ['node.kubernetes.io/instance-type', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'kubernetes.io/arch', 'kubernetes.io/os', 'kubernetes.io/hostname']))",message="labels under stratos.sh/ and the well-known labels the cloud sets are reserved; use requirements for instance type, zone, architecture and capacity type"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 316 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="label keys must be qualified names such as example.com/team"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.contains('/') ? (k.indexOf('/') <= 253 && size(k) - k.indexOf('/') - 1 <= 63) : size(k) <= 63)",message="label keys must have a name of at most 63 characters after a prefix of at most 253"
	Labels map[string]LabelValue `json:"labels,omitempty"`

	// Annotations added to every node of the pool: keys are qualified names such as
	// example.com/owner, values at most 2048 characters, so that 100 of them stay within
	// the 256 KiB the API server lets a Node's annotations hold. Keys under stratos.sh/
	// are reserved. Unset: none.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('stratos.sh/'))",message="annotations under stratos.sh/ are reserved for Stratos"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 316 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="annotation keys must be qualified names such as example.com/owner"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.contains('/') ? (k.indexOf('/') <= 253 && size(k) - k.indexOf('/') - 1 <= 63) : size(k) <= 63)",message="annotation keys must have a name of at most 63 characters after a prefix of at most 253"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k]) <= 2048)",message="annotation values must be at most 2048 characters"
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplateSpec is what every NodeClaim of a pool asks for.
//
// +kubebuilder:validation:XValidation:rule="!has(self.taints) || !has(self.startupTaints) || !self.taints.exists(t, self.startupTaints.exists(s, s.key == t.key && s.effect == t.effect))",message="a taint cannot be both in taints and in startupTaints"
type NodeClaimTemplateSpec struct {
	// Taints every node of the pool carries for its whole life. Unset: none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Taints []Taint `json:"taints,omitempty"`

	// StartupTaints are set when a node registers and removed by another agent (a CNI or
	// a device plugin) when the node is ready for pods. Stratos waits for them to go
	// before it calls the node initialised; they do not repel pods in the simulation.
	// Unset: none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	StartupTaints []Taint `json:"startupTaints,omitempty"`

	// Requirements narrow the instance types, zones, architectures and capacity types the
	// pool may launch, by those labels or by the instance labels (stratos.sh/instance-*:
	// family, category, generation, size, vCPUs, memory, GPUs, hypervisor, network
	// bandwidth). Unset means any the node class allows.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=30
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`

	// Kubelet configures the kubelet of the pool's nodes: max pods, reserved resources,
	// eviction and image garbage collection thresholds. Changing it drifts the pool's
	// nodes. Unset: the defaults of the node class's image.
	// +optional
	Kubelet *KubeletConfiguration `json:"kubelet,omitempty"`

	// NodeClassRef is the node class the pool launches with.
	// +required
	NodeClassRef NodeClassReference `json:"nodeClassRef"`

	// ExpireAfter replaces a node this long after its launch; Never turns expiry off.
	// Defaults to 720h (30 days).
	// +optional
	// +kubebuilder:default="720h"
	ExpireAfter *ExpiryDuration `json:"expireAfter,omitempty"`

	// TerminationGracePeriod bounds a drain: after it, pods that PodDisruptionBudgets
	// still protect are deleted anyway. It must be longer than zero: 0s would force every
	// drain at once, past every budget, so it is refused rather than read as "no
	// timeout". Unset (the default) means never force: the drain waits for the budgets.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('[1-9]')",message="terminationGracePeriod must be longer than zero; leave it unset for drains that wait for PodDisruptionBudgets without a limit"
	TerminationGracePeriod *Duration `json:"terminationGracePeriod,omitempty"`
}

// Limits cap a pool, by resource name: cpu, memory, nvidia.com/gpu or any other
// resource its nodes report in their capacity, and nodes, the number of claims. Every
// claim not being deleted counts, whatever its phase. At most 16 limits: the API server
// bounds the cost of the rules that check each of them.
//
// +kubebuilder:validation:MaxProperties=16
// +kubebuilder:validation:XValidation:rule="self.all(k, !string(self[k]).startsWith('-'))",message="limits must not be negative"
// +kubebuilder:validation:XValidation:rule="!('nodes' in self) || string(self['nodes']).matches('^[0-9]+$')",message="the nodes limit is a whole number of nodes such as 10"
type Limits corev1.ResourceList

// LimitNodes is the key of Limits that caps the number of a pool's claims.
const LimitNodes corev1.ResourceName = "nodes"

// Standby configures the warm pool.
//
// +kubebuilder:validation:XValidation:rule="!has(self.max) || self.max >= self.min",message="standby.max must be at least standby.min"
type Standby struct {
	// Min is the number of warm, stopped nodes the pool keeps ready. Defaults to 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Min int32 `json:"min"`

	// Max is the most standby nodes the pool keeps, nodes given back by running
	// workloads included; above it the drifted, then the oldest, standby nodes are
	// terminated. Defaults to min (or the active window's minimum).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	Max *int32 `json:"max,omitempty"`

	// Warmup is the first boot of a standby node, before it is stopped.
	// +optional
	// +kubebuilder:default={}
	Warmup Warmup `json:"warmup,omitempty"`

	// Requirements narrow, for standby nodes only, the instance types, zones,
	// architectures and capacity types the template allows: which types or sizes the
	// warm pool keeps. Standby nodes are always of a capacity type that can stop and
	// start (on-demand); spot is for cold launches. Unset: the template's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=30
	// +kubebuilder:validation:XValidation:rule="!self.exists(r, r.key == 'stratos.sh/capacity-type' && ((r.operator == 'In' && has(r.values) && r.values.all(v, v == 'spot')) || (r.operator == 'NotIn' && has(r.values) && 'on-demand' in r.values) || r.operator == 'DoesNotExist'))",message="standby nodes must be able to stop and start: their requirements cannot rule out on-demand capacity"
	Requirements []NodeSelectorRequirement `json:"requirements,omitempty"`

	// Resources is the shape of pod a standby node must hold, such as {cpu: "4", memory:
	// 16Gi}: each standby node is the cheapest type whose allocatable has room for these
	// requests. Unset: the cheapest type the requirements allow.
	// +optional
	// +kubebuilder:validation:MaxProperties=8
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'pods', 'ephemeral-storage'] || k.contains('/'))",message="resources may name cpu, memory, pods, ephemeral-storage or an extended resource (a name with a domain)"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !string(self[k]).startsWith('-'))",message="standby resources must not be negative"
	Resources corev1.ResourceList `json:"resources,omitempty"`

	// Learned sizes the warm pool from the demand the pool has seen rather than from a
	// count: for each coming interval, a high percentile of the nodes its pending pods
	// needed at the same time of day on past days, set ahead by the pool's measured
	// warm-up, within min, max and the pool's limits. Unset: the warm pool is min (or
	// the active window's).
	// +optional
	Learned *LearnedStandby `json:"learned,omitempty"`
}

// WarmupTimeoutAction is what happens to a node whose warmup does not finish in time.
// +kubebuilder:validation:Enum=stop;terminate
type WarmupTimeoutAction string

const (
	// WarmupTimeoutStop stops the node and keeps it as standby anyway.
	WarmupTimeoutStop WarmupTimeoutAction = "stop"
	// WarmupTimeoutTerminate terminates the node; the pool warms a new one.
	WarmupTimeoutTerminate WarmupTimeoutAction = "terminate"
)

// Warmup configures the first boot of a standby node.
type Warmup struct {
	// Timeout bounds the warmup, from launch to stopped. Defaults to 10m.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="self.matches('[1-9]')",message="warmup timeout must be longer than zero"
	Timeout *Duration `json:"timeout,omitempty"`

	// TimeoutAction is what happens when the timeout passes: stop (keep the node as
	// standby) or terminate (replace it). Defaults to terminate.
	// +optional
	// +kubebuilder:default=terminate
	TimeoutAction WarmupTimeoutAction `json:"timeoutAction,omitempty"`

	// Images are pulled during warmup so that pods on a started node skip the pull.
	// Unset: none; warmup ends once the node is initialised.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	Images []string `json:"images,omitempty"`
}

// NodePoolStatus is what the pool controller observed.
type NodePoolStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// StandbyTarget is the number of standby nodes the pool aims for now: standby.min or
	// the active window's override, within limits.
	// +optional
	StandbyTarget int32 `json:"standbyTarget"`

	// Nodes counts the pool's claims by phase.
	// +optional
	Nodes NodeCounts `json:"nodes"`

	// Resources is the capacity of the pool's claims, summed.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`

	// ActiveWindow names the window in force, if any.
	// +optional
	ActiveWindow string `json:"activeWindow,omitempty"`

	// PreWarming names the windows about to open whose targets the pool warms up for
	// already (see preWarm), comma-separated.
	// +optional
	PreWarming string `json:"preWarming,omitempty"`

	// NextWindowTransition is when a window of the pool next opens or closes; unset when
	// none ever does. The pool is looked at again then.
	// +optional
	NextWindowTransition *metav1.Time `json:"nextWindowTransition,omitempty"`

	// Learned explains the learned warm-pool target (spec.standby.learned): the target,
	// the forecast and the history behind it. Unset when the pool learns nothing.
	// +optional
	Learned *LearnedStatus `json:"learned,omitempty"`

	// WarmupFailures records the pool's claims that failed to warm up or to register, one
	// after another, since the last that warmed up and since the last change of the
	// pool's or its node class's spec. While it is set the pool backs off: it creates no
	// standby claim before retryAfter, then warms one at a time. Unset when nothing failed.
	// +optional
	WarmupFailures *WarmupFailures `json:"warmupFailures,omitempty"`

	// Conditions: Ready (the target is met), Degraded (something keeps it from being met,
	// or the cloud does not answer for some of its instances as the cluster's),
	// BudgetsValid (every disruption budget can be read and its schedule fires) and, only
	// when False, WarmPoolSupported (the node class cannot stand nodes by, so the pool
	// keeps no warm pool).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WarmupFailures is a pool's record of warm-ups and registrations that failed in a row.
// It lives in the status so that the backoff survives a restart of the operator.
type WarmupFailures struct {
	// Count is how many claims failed in a row.
	Count int32 `json:"count"`
	// Reason is the last failure's: WarmupTimeout or RegistrationTimeout.
	Reason string `json:"reason"`
	// Message is the last failed claim's own account, naming the images or the step.
	Message string `json:"message"`
	// LastFailureTime is when the last failure was counted.
	LastFailureTime metav1.Time `json:"lastFailureTime"`
	// RetryAfter is when the pool may create a standby claim again.
	RetryAfter metav1.Time `json:"retryAfter"`
	// PoolGeneration and NodeClassGeneration are the specs the failures happened under:
	// a change of either starts afresh.
	PoolGeneration      int64 `json:"poolGeneration"`
	NodeClassGeneration int64 `json:"nodeClassGeneration"`
	// Counted names the failed claims already counted that still exist (their instances
	// terminating), so that no pass counts one twice.
	// +optional
	// +listType=set
	Counted []string `json:"counted,omitempty"`
}

// NodeCounts counts claims by phase.
type NodeCounts struct {
	// Total is every claim of the pool, whatever its phase.
	Total int32 `json:"total"`
	// Launching claims wait for their instance to run.
	Launching int32 `json:"launching"`
	// Registering claims wait for their Node to register.
	Registering int32 `json:"registering"`
	// Initializing claims wait for their Node to be Ready with its network up.
	Initializing int32 `json:"initializing"`
	// WarmingUp claims pull images before they stop.
	WarmingUp int32 `json:"warmingUp"`
	// Stopping claims wait for their instance to stop.
	Stopping int32 `json:"stopping"`
	// Standby claims are warm and stopped.
	Standby int32 `json:"standby"`
	// Starting claims wait for their started Node to be Ready.
	Starting int32 `json:"starting"`
	// Running claims serve pods.
	Running int32 `json:"running"`
	// Draining claims evict their pods before they stop.
	Draining int32 `json:"draining"`
	// Terminating claims wait for their instance and Node to go.
	Terminating int32 `json:"terminating"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodePool `json:"items"`
}
