package v1beta1

import corev1 "k8s.io/api/core/v1"

// KubeletConfiguration is the part of the kubelet's configuration a pool sets on its
// nodes. The cloud provider writes it into the node's boot configuration (nodeadm's
// NodeConfig on Amazon Linux 2023, the settings TOML on Bottlerocket), and the
// scheduling simulation computes each instance type's allocatable from it, as the
// kubelet will. Unset fields keep the defaults of the node's image (on EKS: max pods
// from the instance type's network interfaces, kube-reserved from max pods and vCPUs,
// eviction at 100Mi of memory).
//
// +kubebuilder:validation:XValidation:rule="!has(self.evictionSoft) || self.evictionSoft.all(k, has(self.evictionSoftGracePeriod) && k in self.evictionSoftGracePeriod)",message="every evictionSoft signal needs an evictionSoftGracePeriod"
// +kubebuilder:validation:XValidation:rule="!has(self.evictionSoftGracePeriod) || self.evictionSoftGracePeriod.all(k, has(self.evictionSoft) && k in self.evictionSoft)",message="every evictionSoftGracePeriod signal needs an evictionSoft threshold"
// +kubebuilder:validation:XValidation:rule="!has(self.imageGCHighThresholdPercent) || !has(self.imageGCLowThresholdPercent) || self.imageGCLowThresholdPercent < self.imageGCHighThresholdPercent",message="imageGCLowThresholdPercent must be below imageGCHighThresholdPercent"
type KubeletConfiguration struct {
	// MaxPods is the most pods the kubelet runs, and the node's pods capacity. On EKS
	// with the VPC CNI, more pods than the instance type's network interfaces hold need
	// prefix delegation. Unset: the image's default.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxPods *int32 `json:"maxPods,omitempty"`

	// SystemReserved is what the kubelet keeps back for the operating system's daemons:
	// cpu, memory, ephemeral-storage, pid, each zero or more (the kubelet refuses to
	// start with a negative reservation). Unset: none.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])",message="systemReserved takes cpu, memory, ephemeral-storage and pid"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !isQuantity(string(self[k])) || !quantity(string(self[k])).isLessThan(quantity('0')))",message="systemReserved quantities must not be negative: the kubelet refuses to start with them"
	SystemReserved corev1.ResourceList `json:"systemReserved,omitempty"`

	// KubeReserved is what the kubelet keeps back for Kubernetes' own daemons (the
	// kubelet, the container runtime): cpu, memory, ephemeral-storage, pid, each zero or
	// more. A resource set here replaces the image's default for it. Unset: the image's
	// defaults.
	// +optional
	// +kubebuilder:validation:MaxProperties=4
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage', 'pid'])",message="kubeReserved takes cpu, memory, ephemeral-storage and pid"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !isQuantity(string(self[k])) || !quantity(string(self[k])).isLessThan(quantity('0')))",message="kubeReserved quantities must not be negative: the kubelet refuses to start with them"
	KubeReserved corev1.ResourceList `json:"kubeReserved,omitempty"`

	// EvictionHard are the thresholds at which the kubelet evicts pods at once, by
	// signal (memory.available, nodefs.available, nodefs.inodesFree, imagefs.available,
	// imagefs.inodesFree, pid.available), each a quantity (100Mi) or a percentage
	// (10%). A signal set here replaces the image's default for it. Unset: the
	// image's defaults.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])",message="eviction signals are memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree and pid.available"
	EvictionHard map[string]EvictionThreshold `json:"evictionHard,omitempty"`

	// EvictionSoft are thresholds at which the kubelet evicts pods once the signal has
	// stayed past them for its grace period, by signal, as in evictionHard. Every
	// signal needs a grace period in evictionSoftGracePeriod. Unset: none.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'])",message="eviction signals are memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree and pid.available"
	EvictionSoft map[string]EvictionThreshold `json:"evictionSoft,omitempty"`

	// EvictionSoftGracePeriod is, by signal, how long a soft threshold must be passed
	// before the kubelet evicts. Unset: none.
	// +optional
	// +kubebuilder:validation:MaxProperties=6
	EvictionSoftGracePeriod map[string]Duration `json:"evictionSoftGracePeriod,omitempty"`

	// ImageGCHighThresholdPercent is the disk usage at which the kubelet starts removing
	// unused images, from 1 to 100. Warmed images count as unused on a stopped node's
	// disk: keep it high enough for them. Unset: the image's default (85).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	ImageGCHighThresholdPercent *int32 `json:"imageGCHighThresholdPercent,omitempty"`

	// ImageGCLowThresholdPercent is the disk usage the kubelet's image removal brings
	// the disk down to, from 0 to 99 and below the high threshold. Unset: the image's
	// default (80).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=99
	ImageGCLowThresholdPercent *int32 `json:"imageGCLowThresholdPercent,omitempty"`
}

// EvictionThreshold is a positive quantity such as 100Mi or a percentage of the
// resource's capacity from 0% to 100% such as 10%, as the kubelet takes them.
//
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self.matches('^(100([.]0+)?|[0-9]{1,2}([.][0-9]+)?)%$') || (isQuantity(self) && quantity(self).isGreaterThan(quantity('0')))",message="eviction thresholds are positive quantities such as 100Mi or percentages from 0% to 100% such as 10%"
type EvictionThreshold string
