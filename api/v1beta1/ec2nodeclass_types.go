package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClass holds the EC2 launch parameters of a pool: image, network, identity,
// user data, disks, tags and instance metadata options.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=sec2nc,categories=stratos
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.spec.role`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec EC2NodeClassSpec `json:"spec"`
	// +optional
	Status EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassSpec are the EC2 launch parameters.
//
// +kubebuilder:validation:XValidation:rule="has(self.role) != has(self.instanceProfile)",message="set exactly one of role and instanceProfile"
// +kubebuilder:validation:XValidation:rule="!self.amiSelectorTerms.exists(t, has(t.alias)) || size(self.amiSelectorTerms) == 1",message="an AMI alias must be the only AMI selector term"
// +kubebuilder:validation:XValidation:rule="!has(self.amiFamily) || !self.amiSelectorTerms.exists(t, has(t.alias)) || self.amiSelectorTerms.all(t, !has(t.alias) || t.alias.startsWith(self.amiFamily.lowerAscii() + '@'))",message="amiFamily must agree with the AMI alias: AL2023 for al2023@..., Bottlerocket for bottlerocket@...; or leave amiFamily unset and it follows the alias"
type EC2NodeClassSpec struct {
	// AMISelectorTerms select the image; the newest image any term matches wins.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms"`

	// AMIFamily is what the images are, and so the user data that joins them to the
	// cluster, as Karpenter's EC2NodeClass names it: AL2023 (nodeadm's NodeConfig after
	// spec.userData), Bottlerocket (settings TOML, Stratos's keys written over
	// spec.userData's) or Custom (spec.userData passed to the instance as it is: it must
	// join the cluster itself). Stratos supports no AL2 or Windows images. With an alias
	// term it may be unset, as the alias says the family, and when set must agree with
	// it. With id, name or tags terms it says what the selected images are; unset there,
	// the images are custom ones and, as before amiFamily existed, get nodeadm's
	// NodeConfig after spec.userData (which an AL2023-based image runs, and other
	// cloud-init images ignore).
	// +optional
	// +kubebuilder:validation:Enum=AL2023;Bottlerocket;Custom
	AMIFamily string `json:"amiFamily,omitempty"`

	// SubnetSelectorTerms select the subnets instances launch in.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	SubnetSelectorTerms []SubnetSelectorTerm `json:"subnetSelectorTerms"`

	// SecurityGroupSelectorTerms select the security groups of the instances.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=30
	SecurityGroupSelectorTerms []SecurityGroupSelectorTerm `json:"securityGroupSelectorTerms"`

	// Role is the name (not the ARN) of the IAM role of the nodes; Stratos manages an
	// instance profile for it. Set exactly one of role and instanceProfile; unset when
	// instanceProfile is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9+=,.@_-]+$')",message="role must be an IAM role name such as StratosNodeRole, not an ARN: letters, digits and +=,.@_-"
	Role string `json:"role,omitempty"`

	// InstanceProfile is the name (not the ARN) of an existing IAM instance profile for
	// the nodes. Set exactly one of role and instanceProfile; unset when role is set.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9+=,.@_-]+$')",message="instanceProfile must be an IAM instance profile name, not an ARN: letters, digits and +=,.@_-"
	InstanceProfile string `json:"instanceProfile,omitempty"`

	// UserData runs at first boot, merged with what the image family needs to join.
	// Unset: only what the image family needs.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	UserData *string `json:"userData,omitempty"`

	// BlockDeviceMappings are the instance's disks. Unset means the image's defaults.
	// A standby node keeps its disks while stopped; they are what it costs.
	// +optional
	// +listType=map
	// +listMapKey=deviceName
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:XValidation:rule="self.filter(b, has(b.rootVolume) && b.rootVolume).size() <= 1",message="at most one block device may be the root volume"
	BlockDeviceMappings []BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`

	// Tags added to every instance and volume: at most 45, as EC2 takes 50 tags on a
	// resource and Stratos adds up to 5 of its own (stratos.sh/cluster, -nodepool,
	// -nodeclaim, kubernetes.io/cluster/<cluster> and Name, which a tag here replaces).
	// Keys under stratos.sh/ and kubernetes.io/cluster/ are Stratos's, and keys starting
	// with aws: (in any case) are AWS's. Unset: only the tags Stratos adds.
	// +optional
	// +kubebuilder:validation:MaxProperties=45
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('stratos.sh/') && !k.startsWith('kubernetes.io/cluster/'))",message="tag keys under stratos.sh/ and kubernetes.io/cluster/ are reserved"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.lowerAscii().startsWith('aws:'))",message="tag keys starting with aws: are reserved for AWS"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 128 && size(self[k]) <= 256)",message="tag keys must be 1 to 128 characters and values at most 256"
	Tags map[string]string `json:"tags,omitempty"`

	// Hibernate makes standby nodes hibernate instead of stopping: the instance's memory
	// is written to its root volume and a start resumes the running kubelet and
	// containers, which is faster than a boot. EC2 needs an encrypted root volume larger
	// than the instance's memory and an instance type that supports hibernation. Defaults
	// to false: standby nodes stop.
	// +optional
	Hibernate bool `json:"hibernate,omitempty"`

	// MetadataOptions of the instance metadata service.
	// +optional
	// +kubebuilder:default={}
	MetadataOptions MetadataOptions `json:"metadataOptions,omitempty"`
}

// AMI families spec.amiFamily takes, as Karpenter's EC2NodeClass spells them.
const (
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
)

// AMISelectorTerm selects images by alias, by ID, or by name, owner and tags.
//
// +kubebuilder:validation:XValidation:rule="[has(self.alias), has(self.id), has(self.name) || has(self.tags)].filter(x, x).size() == 1",message="an AMI selector term needs exactly one of alias, id, or name and tags"
// +kubebuilder:validation:XValidation:rule="!has(self.owner) || has(self.name) || has(self.tags)",message="owner goes with name or tags"
type AMISelectorTerm struct {
	// Alias picks the image family's published image: al2023@latest or bottlerocket@v1.30.0.
	// Unset unless the term selects by alias.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^(al2023|bottlerocket)@(latest|v[0-9]+([.][0-9]+)*)$')",message="alias must be al2023 or bottlerocket followed by @latest or @vX.Y.Z"
	Alias string `json:"alias,omitempty"`
	// ID of an image such as ami-0123456789abcdef0. Unset unless the term selects by ID.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^ami-[0-9a-f]{8,17}$')",message="id must be an AMI ID such as ami-0123456789abcdef0"
	// +kubebuilder:validation:MaxLength=21
	ID string `json:"id,omitempty"`
	// Name of the image; * matches any characters. Unset: any name.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name,omitempty"`
	// Owner account ID or alias (amazon, self). Defaults to the caller's account and amazon.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Owner string `json:"owner,omitempty"`
	// Tags the image must carry; * as a value matches any. Unset: any tags.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=20
	Tags map[string]string `json:"tags,omitempty"`
}

// SubnetSelectorTerm selects subnets by ID or by tags.
//
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.tags)",message="a subnet selector term needs exactly one of id and tags"
type SubnetSelectorTerm struct {
	// ID of a subnet such as subnet-0123456789abcdef0. Unset unless the term selects by ID.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:XValidation:rule="self.matches('^subnet-[0-9a-f]{8,17}$')",message="id must be a subnet ID such as subnet-0123456789abcdef0"
	ID string `json:"id,omitempty"`
	// Tags the subnet must carry; * as a value matches any. Unset unless the term selects
	// by tags.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=20
	Tags map[string]string `json:"tags,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by ID, by name or by tags.
//
// +kubebuilder:validation:XValidation:rule="[has(self.id), has(self.name), has(self.tags)].filter(x, x).size() == 1",message="a security group selector term needs exactly one of id, name and tags"
type SecurityGroupSelectorTerm struct {
	// ID of a security group such as sg-0123456789abcdef0. Unset unless the term selects by ID.
	// +optional
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:XValidation:rule="self.matches('^sg-[0-9a-f]{8,17}$')",message="id must be a security group ID such as sg-0123456789abcdef0"
	ID string `json:"id,omitempty"`
	// Name of a security group. Unset unless the term selects by name.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name,omitempty"`
	// Tags the security group must carry; * as a value matches any. Unset unless the term
	// selects by tags.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=20
	Tags map[string]string `json:"tags,omitempty"`
}

// BlockDeviceMapping is one disk of the instance.
type BlockDeviceMapping struct {
	// DeviceName such as /dev/xvda.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	DeviceName string `json:"deviceName"`
	// EBS volume behind the device.
	// +required
	EBS BlockDevice `json:"ebs"`
	// RootVolume marks the device that holds the image. Defaults to false.
	// +optional
	RootVolume bool `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume.
//
// +kubebuilder:validation:XValidation:rule="!has(self.iops) || self.volumeType in ['io1', 'io2', 'gp3']",message="iops applies only to io1, io2 and gp3 volumes"
// +kubebuilder:validation:XValidation:rule="!has(self.throughput) || self.volumeType == 'gp3'",message="throughput applies only to gp3 volumes"
// +kubebuilder:validation:XValidation:rule="!has(self.iops) || self.volumeType != 'gp3' || (self.iops >= 3000 && self.iops <= 80000)",message="gp3 volumes take from 3000 to 80000 iops"
// +kubebuilder:validation:XValidation:rule="!has(self.iops) || self.volumeType != 'io1' || self.iops <= 64000",message="io1 volumes take at most 64000 iops"
type BlockDevice struct {
	// VolumeSize such as 20Gi, from 1Gi to 64Ti. Unset: the image's snapshot size.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).compareTo(quantity('1Gi')) >= 0 && quantity(self).compareTo(quantity('64Ti')) <= 0",message="volumeSize must be from 1Gi to 64Ti"
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty"`
	// VolumeType: standard, io1, io2, gp2, sc1, st1 or gp3. Defaults to gp3.
	// +optional
	// +kubebuilder:default=gp3
	// +kubebuilder:validation:Enum=standard;io1;io2;gp2;sc1;st1;gp3
	VolumeType string `json:"volumeType,omitempty"`
	// IOPS provisioned, for io1 (100 to 64000), io2 (100 to 256000) and gp3 (3000 to
	// 80000). Unset: the volume type's baseline (3000 for gp3).
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=256000
	IOPS *int64 `json:"iops,omitempty"`
	// Throughput in MiB/s, for gp3. Unset: gp3's baseline of 125.
	// +optional
	// +kubebuilder:validation:Minimum=125
	// +kubebuilder:validation:Maximum=2000
	Throughput *int64 `json:"throughput,omitempty"`
	// Encrypted volume. Defaults to true.
	// +optional
	// +kubebuilder:default=true
	Encrypted *bool `json:"encrypted,omitempty"`
	// KMSKeyID encrypts the volume with a customer key. Unset: the AWS-managed key.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	KMSKeyID string `json:"kmsKeyID,omitempty"`
	// DeleteOnTermination removes the volume with the instance. Defaults to true.
	// +optional
	// +kubebuilder:default=true
	DeleteOnTermination *bool `json:"deleteOnTermination,omitempty"`
	// SnapshotID the volume is created from. Unset: an empty volume.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^snap-[0-9a-f]{8,17}$')",message="snapshotID must be a snapshot ID such as snap-0123456789abcdef0"
	SnapshotID string `json:"snapshotID,omitempty"`
}

// MetadataOptions configure the instance metadata service (IMDS).
type MetadataOptions struct {
	// HTTPEndpoint: enabled or disabled. Defaults to enabled.
	// +optional
	// +kubebuilder:default=enabled
	// +kubebuilder:validation:Enum=enabled;disabled
	HTTPEndpoint string `json:"httpEndpoint,omitempty"`
	// HTTPProtocolIPv6: enabled or disabled. Defaults to disabled.
	// +optional
	// +kubebuilder:default=disabled
	// +kubebuilder:validation:Enum=enabled;disabled
	HTTPProtocolIPv6 string `json:"httpProtocolIPv6,omitempty"`
	// HTTPPutResponseHopLimit from 1 to 64. Defaults to 1, so pods cannot reach the
	// node's credentials through IMDS.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	HTTPPutResponseHopLimit int64 `json:"httpPutResponseHopLimit,omitempty"`
	// HTTPTokens: required (IMDSv2 only) or optional. Defaults to required.
	// +optional
	// +kubebuilder:default=required
	// +kubebuilder:validation:Enum=required;optional
	HTTPTokens string `json:"httpTokens,omitempty"`
}

// EC2NodeClassStatus is what Stratos resolved of an EC2NodeClass: the values launches
// use. A change here, such as a new image behind an alias, drifts the nodes launched
// before it.
type EC2NodeClassStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready when every selector resolved and the class can launch.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AMIs the selector terms resolved to, the newest per architecture.
	// +optional
	// +listType=atomic
	AMIs []ResolvedAMI `json:"amis,omitempty"`

	// Subnets the selector terms resolved to, with their zones.
	// +optional
	// +listType=atomic
	Subnets []ResolvedSubnet `json:"subnets,omitempty"`

	// SecurityGroups the selector terms resolved to.
	// +optional
	// +listType=atomic
	SecurityGroups []ResolvedSecurityGroup `json:"securityGroups,omitempty"`

	// InstanceProfile the nodes launch with: spec.instanceProfile, or the one Stratos
	// manages for spec.role.
	// +optional
	InstanceProfile string `json:"instanceProfile,omitempty"`
}

// ResolvedAMI is an image an AMI selector term resolved to.
type ResolvedAMI struct {
	// ID such as ami-0123456789abcdef0.
	// +required
	ID string `json:"id"`
	// Name of the image.
	// +optional
	Name string `json:"name,omitempty"`
	// Architecture of the image as Kubernetes names it: amd64 or arm64.
	// +required
	Architecture string `json:"architecture"`
	// Family the image joins the cluster as: al2023 or bottlerocket, as the alias or
	// spec.amiFamily says, else custom.
	// +optional
	Family string `json:"family,omitempty"`
}

// ResolvedSubnet is a subnet a selector term resolved to.
type ResolvedSubnet struct {
	// ID such as subnet-0123456789abcdef0.
	// +required
	ID string `json:"id"`
	// Zone the subnet is in, such as us-east-1a.
	// +required
	Zone string `json:"zone"`
	// ZoneID the subnet is in, such as use1-az1.
	// +optional
	ZoneID string `json:"zoneID,omitempty"`
}

// ResolvedSecurityGroup is a security group a selector term resolved to.
type ResolvedSecurityGroup struct {
	// ID such as sg-0123456789abcdef0.
	// +required
	ID string `json:"id"`
	// Name of the security group.
	// +optional
	Name string `json:"name,omitempty"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
//
// +kubebuilder:object:root=true
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}
