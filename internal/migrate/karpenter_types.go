package migrate

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The Karpenter objects migrate reads, written from Karpenter's published v1 API
// (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass) with the few v1beta1
// fields that moved (the kubelet on the pool, expireAfter in disruption). They are
// migrate's own types: importing Karpenter would pull its whole module for a reader.
//
// No field has omitempty: decoding an object and encoding it again gives back every
// field migrate knows, so that what the input has beyond them is found by comparison
// (see unknownFields) and reported rather than silently lost. Numbers and values that
// YAML may write unquoted (cpu: 1000) are scalars, read whatever their JSON type.

// Karpenter's groups and the kinds migrate converts.
const (
	karpenterGroup    = "karpenter.sh"
	karpenterAWSGroup = "karpenter.k8s.aws"
	kindNodePool      = "NodePool"
	kindEC2NodeClass  = "EC2NodeClass"
)

type karpenterMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type karpenterNodePool struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   karpenterMeta         `json:"metadata"`
	Spec       karpenterNodePoolSpec `json:"spec"`
}

type karpenterNodePoolSpec struct {
	Template   karpenterTemplate    `json:"template"`
	Disruption *karpenterDisruption `json:"disruption"`
	Limits     map[string]scalar    `json:"limits"`
	Weight     *int64               `json:"weight"`
	// Replicas makes a static pool in recent Karpenter releases; Stratos has none.
	Replicas *int64 `json:"replicas"`
}

type karpenterTemplate struct {
	Metadata karpenterTemplateMeta `json:"metadata"`
	Spec     karpenterTemplateSpec `json:"spec"`
}

type karpenterTemplateMeta struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type karpenterTemplateSpec struct {
	NodeClassRef           *karpenterNodeClassRef `json:"nodeClassRef"`
	Requirements           []karpenterRequirement `json:"requirements"`
	Taints                 []karpenterTaint       `json:"taints"`
	StartupTaints          []karpenterTaint       `json:"startupTaints"`
	ExpireAfter            *string                `json:"expireAfter"`
	TerminationGracePeriod *string                `json:"terminationGracePeriod"`
	// Kubelet is v1beta1's place for the kubelet; v1 has it on the EC2NodeClass.
	Kubelet *karpenterKubelet `json:"kubelet"`
}

type karpenterNodeClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	// APIVersion is v1beta1's spelling of the group.
	APIVersion string `json:"apiVersion"`
}

type karpenterRequirement struct {
	Key       string   `json:"key"`
	Operator  string   `json:"operator"`
	Values    []string `json:"values"`
	MinValues *int64   `json:"minValues"`
}

type karpenterTaint struct {
	Key       string `json:"key"`
	Value     string `json:"value"`
	Effect    string `json:"effect"`
	TimeAdded any    `json:"timeAdded"`
}

type karpenterDisruption struct {
	ConsolidationPolicy string            `json:"consolidationPolicy"`
	ConsolidateAfter    *string           `json:"consolidateAfter"`
	Budgets             []karpenterBudget `json:"budgets"`
	// ExpireAfter is v1beta1's place for it; v1 has it in the template.
	ExpireAfter *string `json:"expireAfter"`
}

type karpenterBudget struct {
	Nodes    string   `json:"nodes"`
	Schedule *string  `json:"schedule"`
	Duration *string  `json:"duration"`
	Reasons  []string `json:"reasons"`
}

type karpenterEC2NodeClass struct {
	APIVersion string                    `json:"apiVersion"`
	Kind       string                    `json:"kind"`
	Metadata   karpenterMeta             `json:"metadata"`
	Spec       karpenterEC2NodeClassSpec `json:"spec"`
}

type karpenterEC2NodeClassSpec struct {
	AMIFamily                        *string                       `json:"amiFamily"`
	AMISelectorTerms                 []karpenterAMITerm            `json:"amiSelectorTerms"`
	SubnetSelectorTerms              []karpenterSubnetTerm         `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms       []karpenterSecurityGroupTerm  `json:"securityGroupSelectorTerms"`
	CapacityReservationSelectorTerms []any                         `json:"capacityReservationSelectorTerms"`
	Role                             *string                       `json:"role"`
	InstanceProfile                  *string                       `json:"instanceProfile"`
	Tags                             map[string]scalar             `json:"tags"`
	Kubelet                          *karpenterKubelet             `json:"kubelet"`
	BlockDeviceMappings              []karpenterBlockDeviceMapping `json:"blockDeviceMappings"`
	InstanceStorePolicy              *string                       `json:"instanceStorePolicy"`
	UserData                         *string                       `json:"userData"`
	DetailedMonitoring               *bool                         `json:"detailedMonitoring"`
	AssociatePublicIPAddress         *bool                         `json:"associatePublicIPAddress"`
	MetadataOptions                  *karpenterMetadataOptions     `json:"metadataOptions"`
	Context                          *string                       `json:"context"`
	IPPrefixCount                    *int64                        `json:"ipPrefixCount"`
	EnclaveOptions                   *karpenterEnclaveOptions      `json:"enclaveOptions"`
}

type karpenterEnclaveOptions struct {
	Enabled *bool `json:"enabled"`
}

type karpenterAMITerm struct {
	Alias        string            `json:"alias"`
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Owner        string            `json:"owner"`
	Tags         map[string]string `json:"tags"`
	SSMParameter string            `json:"ssmParameter"`
}

type karpenterSubnetTerm struct {
	ID   string            `json:"id"`
	Tags map[string]string `json:"tags"`
}

type karpenterSecurityGroupTerm struct {
	ID   string            `json:"id"`
	Name string            `json:"name"`
	Tags map[string]string `json:"tags"`
}

type karpenterKubelet struct {
	MaxPods                     *int64            `json:"maxPods"`
	PodsPerCore                 *int64            `json:"podsPerCore"`
	SystemReserved              map[string]scalar `json:"systemReserved"`
	KubeReserved                map[string]scalar `json:"kubeReserved"`
	EvictionHard                map[string]scalar `json:"evictionHard"`
	EvictionSoft                map[string]scalar `json:"evictionSoft"`
	EvictionSoftGracePeriod     map[string]string `json:"evictionSoftGracePeriod"`
	EvictionMaxPodGracePeriod   *int64            `json:"evictionMaxPodGracePeriod"`
	ImageGCHighThresholdPercent *int64            `json:"imageGCHighThresholdPercent"`
	ImageGCLowThresholdPercent  *int64            `json:"imageGCLowThresholdPercent"`
	CPUCFSQuota                 *bool             `json:"cpuCFSQuota"`
	ClusterDNS                  []string          `json:"clusterDNS"`
}

type karpenterBlockDeviceMapping struct {
	DeviceName *string               `json:"deviceName"`
	EBS        *karpenterBlockDevice `json:"ebs"`
	RootVolume bool                  `json:"rootVolume"`
}

type karpenterBlockDevice struct {
	DeleteOnTermination      *bool   `json:"deleteOnTermination"`
	Encrypted                *bool   `json:"encrypted"`
	IOPS                     *int64  `json:"iops"`
	KMSKeyID                 *string `json:"kmsKeyID"`
	SnapshotID               *string `json:"snapshotID"`
	Throughput               *int64  `json:"throughput"`
	VolumeInitializationRate *int64  `json:"volumeInitializationRate"`
	VolumeSize               *scalar `json:"volumeSize"`
	VolumeType               *string `json:"volumeType"`
}

type karpenterMetadataOptions struct {
	HTTPEndpoint            *string `json:"httpEndpoint"`
	HTTPProtocolIPv6        *string `json:"httpProtocolIPv6"`
	HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit"`
	HTTPTokens              *string `json:"httpTokens"`
}

// scalar is a value YAML may write as a string, a number or a boolean (cpu: 1000,
// memory: 1000Gi), kept as the string it spells.
type scalar string

func (s *scalar) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		*s = scalar(v)
	case float64:
		*s = scalar(strconv.FormatFloat(v, 'f', -1, 64))
	case bool:
		*s = scalar(strconv.FormatBool(v))
	default:
		return fmt.Errorf("want a string or a number, not %s", b)
	}
	return nil
}
