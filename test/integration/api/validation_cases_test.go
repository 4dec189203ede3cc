package api_test

import (
	"fmt"
	"strings"
)

// Minimal valid objects; each invalid case is one of them with a JSON merge patch.
const (
	basePool = `
apiVersion: stratos.sh/v1beta1
kind: NodePool
metadata: {name: base}
spec:
  template:
    spec:
      nodeClassRef: {kind: FakeNodeClass, name: default}
`
	baseClaim = `
apiVersion: stratos.sh/v1beta1
kind: NodeClaim
metadata: {name: base}
spec:
  nodePool: general
  nodeClassRef: {kind: FakeNodeClass, name: default}
`
	baseAWSClass = `
apiVersion: stratos.sh/v1beta1
kind: EC2NodeClass
metadata: {name: base}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{id: subnet-0123456789abcdef0}]
  securityGroupSelectorTerms: [{id: sg-0123456789abcdef0}]
  role: NodeRole
`
	baseFakeClass = `
apiVersion: stratos.sh/v1beta1
kind: FakeNodeClass
metadata: {name: base}
spec: {}
`
)

// Names one character past the 63 a label value, or the name part of a qualified name,
// may hold; a prefix one past the 253 of a DNS subdomain.
var (
	name64    = strings.Repeat("n", 64)
	prefix254 = strings.Repeat("p", 254)
)

// manyTags is a YAML map of n distinct tags.
func manyTags(n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%d: x", i)
	}
	return "{" + strings.Join(tags, ", ") + "}"
}

// invalidCase is an object the API server must reject with a message containing want.
type invalidCase struct {
	name  string
	base  string
	patch string
	want  string
}

var invalidCases = []invalidCase{
	// NodePool: its name is the value of its nodes' stratos.sh/nodepool label.
	{"pool name of 64 characters", basePool, "metadata: {name: " + name64 + "}", `a NodePool's name must be at most 63 characters: it is the value of its nodes' stratos.sh/nodepool label`},
	// NodePool: template and node class reference.
	{"pool without template", basePool, `spec: {template: null}`, `spec.template: Required value`},
	{"template without spec", basePool, `spec: {template: {spec: null}}`, `spec.template.spec: Required value`},
	{"pool without nodeClassRef", basePool, `spec: {template: {spec: {nodeClassRef: null}}}`, `spec.template.spec.nodeClassRef: Required value`},
	{"unknown node class kind", basePool, `spec: {template: {spec: {nodeClassRef: {kind: GCPNodeClass}}}}`, `Unsupported value: "GCPNodeClass"`},
	{"foreign node class group", basePool, `spec: {template: {spec: {nodeClassRef: {group: example.com}}}}`, `Unsupported value: "example.com"`},
	{"node class name not a DNS name", basePool, `spec: {template: {spec: {nodeClassRef: {name: Bad_Name}}}}`, `name must be a lowercase DNS subdomain`},
	// NodePool: requirements.
	{"requirement on an unsupported key", basePool, `spec: {template: {spec: {requirements: [{key: example.com/gpu, operator: Exists}]}}}`, `Unsupported value: "example.com/gpu"`},
	{"unknown requirement operator", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-cpu, operator: Gte, values: ["4"]}]}}}`, `Unsupported value: "Gte"`},
	{"Gt on a key that is not a number", basePool, `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: Gt, values: ["1"]}]}}}`, `Gt and Lt apply only to the numeric keys`},
	{"Gt on the instance family", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-family, operator: Gt, values: ["5"]}]}}}`, `Gt and Lt apply only to the numeric keys`},
	{"Gt without a value", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-cpu, operator: Gt}]}}}`, `Gt and Lt take exactly one value`},
	{"Lt with two values", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-memory, operator: Lt, values: ["8192", "16384"]}]}}}`, `Gt and Lt take exactly one value`},
	{"Lt with a word", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-cpu, operator: Lt, values: [four]}]}}}`, `are whole numbers such as 4`},
	{"Gt with a negative number", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-generation, operator: Gt, values: ["-1"]}]}}}`, `are whole numbers such as 4`},
	{"memory with a unit", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-memory, operator: In, values: [8Gi]}]}}}`, `are whole numbers such as 4`},
	{"minValues with DoesNotExist", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-gpu-name, operator: DoesNotExist, minValues: 2}]}}}`, `minValues cannot go with DoesNotExist`},
	{"minValues above the values of In", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-family, operator: In, values: [m5, c5], minValues: 3}]}}}`, `minValues cannot exceed the number of values of an In requirement`},
	{"minValues on the zone", basePool, `spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: Exists, minValues: 2}]}}}`, `minValues applies to what the instance type is, not to the zone or the capacity type`},
	{"minValues of 0", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/instance-family, operator: Exists, minValues: 0}]}}}`, `minValues in body should be greater than or equal to 1`},
	{"minValues of 51", basePool, `spec: {template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: Exists, minValues: 51}]}}}`, `minValues in body should be less than or equal to 50`},
	{"In without values", basePool, `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: In}]}}}`, `values must be non-empty for the In and NotIn operators`},
	{"Exists with values", basePool, `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: Exists, values: [amd64]}]}}}`, `empty for Exists and DoesNotExist`},
	{"unknown architecture", basePool, `spec: {template: {spec: {requirements: [{key: kubernetes.io/arch, operator: In, values: [x86]}]}}}`, `kubernetes.io/arch values must be amd64 or arm64`},
	{"unknown capacity type", basePool, `spec: {template: {spec: {requirements: [{key: stratos.sh/capacity-type, operator: In, values: [reserved]}]}}}`, `stratos.sh/capacity-type values must be on-demand or spot`},
	{"duplicate requirement values", basePool, `spec: {template: {spec: {requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [a, a]}]}}}`, `Duplicate value: "a"`},
	// NodePool: labels, annotations and taints.
	{"label under stratos.sh", basePool, `spec: {template: {metadata: {labels: {stratos.sh/state: x}}}}`, `labels under stratos.sh/ and the well-known labels the cloud sets are reserved`},
	{"label the cloud sets", basePool, `spec: {template: {metadata: {labels: {node.kubernetes.io/instance-type: m5.large}}}}`, `use requirements for instance type`},
	{"label key not a qualified name", basePool, `spec: {template: {metadata: {labels: {"bad key!": x}}}}`, `label keys must be qualified names`},
	{"label value too fancy", basePool, `spec: {template: {metadata: {labels: {team: "-platform-"}}}}`, `label values must be at most 63 letters`},
	{"annotation under stratos.sh", basePool, `spec: {template: {metadata: {annotations: {stratos.sh/do-not-disrupt: "true"}}}}`, `annotations under stratos.sh/ are reserved`},
	{"taint with unknown effect", basePool, `spec: {template: {spec: {taints: [{key: dedicated, effect: NoRun}]}}}`, `Unsupported value: "NoRun"`},
	{"taint under stratos.sh", basePool, `spec: {template: {spec: {taints: [{key: stratos.sh/standby, effect: NoSchedule}]}}}`, `taint keys under stratos.sh/ are reserved`},
	{"taint key not a qualified name", basePool, `spec: {template: {spec: {taints: [{key: "a b", effect: NoSchedule}]}}}`, `taint key must be a qualified name`},
	{"taint both startup and permanent", basePool, `spec: {template: {spec: {taints: [{key: cni, effect: NoSchedule}], startupTaints: [{key: cni, effect: NoSchedule}]}}}`, `a taint cannot be both in taints and in startupTaints`},
	{"label name of 64 characters", basePool, "spec: {template: {metadata: {labels: {example.com/" + name64 + ": x}}}}", `label keys must have a name of at most 63 characters`},
	{"label prefix of 254 characters", basePool, "spec: {template: {metadata: {labels: {" + prefix254 + "/team: x}}}}", `label keys must have a name of at most 63 characters after a prefix of at most 253`},
	{"annotation key not a qualified name", basePool, `spec: {template: {metadata: {annotations: {"owner team": x}}}}`, `annotation keys must be qualified names`},
	{"annotation name of 64 characters", basePool, "spec: {template: {metadata: {annotations: {example.com/" + name64 + ": x}}}}", `annotation keys must have a name of at most 63 characters`},
	{"annotation value of 2049 characters", basePool, "spec: {template: {metadata: {annotations: {example.com/owner: " + strings.Repeat("v", 2049) + "}}}}", `annotation values must be at most 2048 characters`},
	{"taint name of 64 characters", basePool, "spec: {template: {spec: {taints: [{key: " + name64 + ", effect: NoSchedule}]}}}", `taint key must have a name of at most 63 characters`},
	{"startup taint prefix of 254 characters", basePool, "spec: {template: {spec: {startupTaints: [{key: " + prefix254 + "/cni, effect: NoSchedule}]}}}", `taint key must have a name of at most 63 characters after a prefix of at most 253`},
	// NodePool: sizes and limits.
	{"weight above 100", basePool, `spec: {weight: 101}`, `spec.weight: Invalid value: 101: spec.weight in body should be less than or equal to 100`},
	{"negative node limit", basePool, `spec: {limits: {nodes: -1}}`, `limits must not be negative`},
	{"negative cpu limit", basePool, `spec: {limits: {cpu: "-2"}}`, `limits must not be negative`},
	{"negative GPU limit", basePool, `spec: {limits: {nvidia.com/gpu: "-1"}}`, `limits must not be negative`},
	{"fraction of a node", basePool, `spec: {limits: {nodes: 1.5}}`, `spec.limits.nodes in body must be of type integer,string`},
	{"fraction of a node as a quantity", basePool, `spec: {limits: {nodes: "1.5"}}`, `the nodes limit is a whole number of nodes such as 10`},
	{"node limit with a unit", basePool, `spec: {limits: {nodes: 2k}}`, `the nodes limit is a whole number of nodes such as 10`},
	{"limit not a quantity", basePool, `spec: {limits: {memory: lots}}`, `spec.limits.memory in body should match`},
	{"seventeen limits", basePool, `spec: {limits: {a.io/r1: 1, a.io/r2: 1, a.io/r3: 1, a.io/r4: 1, a.io/r5: 1, a.io/r6: 1, a.io/r7: 1, a.io/r8: 1, a.io/r9: 1, a.io/r10: 1, a.io/r11: 1, a.io/r12: 1, a.io/r13: 1, a.io/r14: 1, a.io/r15: 1, a.io/r16: 1, a.io/r17: 1}}`, `spec.limits: Too many: 17: must have at most 16 items`},
	// NodePool: the shape before v1beta1, where the API server can tell (unknown fields
	// are TestTheShapeBeforeV1beta1IsRefused's).
	{"WhenUnderutilized", basePool, `spec: {disruption: {consolidationPolicy: WhenUnderutilized}}`, `Unsupported value: "WhenUnderutilized": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized"`},
	{"unknown operating system", basePool, `spec: {template: {spec: {requirements: [{key: kubernetes.io/os, operator: In, values: [darwin]}]}}}`, `kubernetes.io/os values must be linux or windows`},
	{"negative standby", basePool, `spec: {standby: {min: -1}}`, `spec.standby.min in body should be greater than or equal to 0`},
	{"standby max below min", basePool, `spec: {standby: {min: 5, max: 2}}`, `standby.max must be at least standby.min`},
	// NodePool: warmup and disruption.
	{"warmup timeout in words", basePool, `spec: {standby: {warmup: {timeout: 10 minutes}}}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"zero warmup timeout", basePool, `spec: {standby: {warmup: {timeout: 0s}}}`, `warmup timeout must be longer than zero`},
	{"unknown warmup timeout action", basePool, `spec: {standby: {warmup: {timeoutAction: pause}}}`, `Unsupported value: "pause"`},
	{"standby on spot only", basePool, `spec: {standby: {requirements: [{key: stratos.sh/capacity-type, operator: In, values: [spot]}]}}`, `standby nodes must be able to stop and start`},
	{"standby without on-demand", basePool, `spec: {standby: {requirements: [{key: stratos.sh/capacity-type, operator: NotIn, values: [on-demand]}]}}`, `standby nodes must be able to stop and start`},
	{"standby requirement on an unsupported key", basePool, `spec: {standby: {requirements: [{key: example.com/gpu, operator: Exists}]}}`, `Unsupported value: "example.com/gpu"`},
	{"standby requirement Lt on the category", basePool, `spec: {standby: {requirements: [{key: stratos.sh/instance-category, operator: Lt, values: ["3"]}]}}`, `Gt and Lt apply only to the numeric keys`},
	{"standby resources of an unknown name", basePool, `spec: {standby: {resources: {cpus: "2"}}}`, `resources may name cpu, memory, pods, ephemeral-storage`},
	{"standby resources not a quantity", basePool, `spec: {standby: {resources: {cpu: two}}}`, `spec.standby.resources.cpu in body should match`},
	{"negative standby resources", basePool, `spec: {standby: {resources: {memory: -1Gi}}}`, `standby resources must not be negative`},
	{"unknown consolidation policy", basePool, `spec: {disruption: {consolidationPolicy: Always}}`, `Unsupported value: "Always"`},
	{"negative consolidateAfter", basePool, `spec: {disruption: {consolidateAfter: -30s}}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"consolidateAfter beyond what Go can hold", basePool, `spec: {disruption: {consolidateAfter: 9999999999h}}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"expireAfter neither duration nor Never", basePool, `spec: {template: {spec: {expireAfter: forever}}}`, `must be a duration such as 720h, or Never`},
	{"zero terminationGracePeriod", basePool, `spec: {template: {spec: {terminationGracePeriod: 0s}}}`, `terminationGracePeriod must be longer than zero; leave it unset`},
	{"zero terminationGracePeriod in minutes", basePool, `spec: {template: {spec: {terminationGracePeriod: 0m0s}}}`, `terminationGracePeriod must be longer than zero`},
	{"budget above 100 percent", basePool, `spec: {disruption: {budgets: [{nodes: "110%"}]}}`, `nodes must be a count such as 3 or a percentage from 0% to 100%`},
	{"budget schedule without duration", basePool, `spec: {disruption: {budgets: [{nodes: "1", schedule: "@daily"}]}}`, `schedule and duration must be set together`},
	{"budget schedule not cron", basePool, `spec: {disruption: {budgets: [{nodes: "1", schedule: every day, duration: 1h}]}}`, `schedule must be a cron expression with five fields`},
	{"budget time zone without schedule", basePool, `spec: {disruption: {budgets: [{nodes: "1", timeZone: UTC}]}}`, `timeZone needs a schedule`},
	{"unknown budget reason", basePool, `spec: {disruption: {budgets: [{nodes: "1", reasons: [Bored]}]}}`, `Unsupported value: "Bored"`},
	// NodePool: windows.
	{"window days spelled out", basePool, `spec: {windows: [{name: w, days: monday, minStandby: 1}]}`, `days must be days (mon to sun), ranges such as mon-fri or fri-mon`},
	{"window hour 25", basePool, `spec: {windows: [{name: w, hours: 9-25, minStandby: 1}]}`, `hours must be hours from 0 to 23`},
	{"window hours with a trailing comma", basePool, `spec: {windows: [{name: w, hours: "9-17,", minStandby: 1}]}`, `hours must be hours from 0 to 23`},
	{"window time zone with spaces", basePool, `spec: {windows: [{name: w, timeZone: Mars/Olympus Mons, minStandby: 1}]}`, `time zone must be an IANA name such as UTC or Europe/Berlin`},
	{"window time zone Local", basePool, `spec: {windows: [{name: w, timeZone: Local, minStandby: 1}]}`, `time zone must be an IANA name`},
	{"window overriding nothing", basePool, `spec: {windows: [{name: w, days: mon-fri}]}`, `a window must override at least one of minStandby, minRunning or maxNodes`},
	{"window pre-warm in words", basePool, `spec: {windows: [{name: w, preWarm: ten minutes, minStandby: 1}]}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"window name with spaces", basePool, `spec: {windows: [{name: Office Hours, minStandby: 1}]}`, `window name must be lowercase letters, digits and '-'`},
	{"duplicate window names", basePool, `spec: {windows: [{name: w, minStandby: 1}, {name: w, maxNodes: 0}]}`, `spec.windows[1]: Duplicate value: {"name":"w"}`},
	// NodePool: a learned warm pool.
	{"learned interval of 7m", basePool, `spec: {standby: {learned: {interval: 7m}}}`, `interval must be whole minutes from 1m to 2h that divide a day`},
	{"learned interval of 30s", basePool, `spec: {standby: {learned: {interval: 30s}}}`, `interval must be whole minutes from 1m to 2h that divide a day`},
	{"learned interval of 3h", basePool, `spec: {standby: {learned: {interval: 3h}}}`, `interval must be whole minutes from 1m to 2h that divide a day`},
	{"learned interval of 90.5s", basePool, `spec: {standby: {learned: {interval: 90.5s}}}`, `interval must be whole minutes from 1m to 2h that divide a day`},
	{"learned half-life of 10m", basePool, `spec: {standby: {learned: {halfLife: 10m}}}`, `halfLife must be at least 1h`},
	{"learned percentile 40", basePool, `spec: {standby: {learned: {percentile: 40}}}`, `should be greater than or equal to 50`},
	{"learned time zone Local", basePool, `spec: {standby: {learned: {timeZone: Local}}}`, `time zone must be an IANA name`},
	{"learned preStart minDays 8", basePool, `spec: {standby: {learned: {preStart: {minDays: 8}}}}`, `should be less than or equal to 7`},
	// NodeClaim.
	{"claim name of 64 characters", baseClaim, "metadata: {name: " + name64 + "}", `a NodeClaim's name must be at most 63 characters`},
	{"claim without pool", baseClaim, `spec: {nodePool: null}`, `spec.nodePool: Required value`},
	{"claim pool not a DNS name", baseClaim, `spec: {nodePool: General_Pool}`, `nodePool must be the name of a NodePool`},
	{"claim pool name of 64 characters", baseClaim, "spec: {nodePool: " + name64 + "}", `spec.nodePool: Too long: may not be more than 63 bytes`},
	{"claim with unknown desired state", baseClaim, `spec: {desiredState: Paused}`, `Unsupported value: "Paused"`},
	{"claim requirement Gt with a word", baseClaim, `spec: {requirements: [{key: stratos.sh/instance-network-bandwidth, operator: Gt, values: [fast]}]}`, `are whole numbers such as 4`},
	// EC2NodeClass.
	{"both role and instance profile", baseAWSClass, `spec: {instanceProfile: NodeProfile}`, `set exactly one of role and instanceProfile`},
	{"neither role nor instance profile", baseAWSClass, `spec: {role: null}`, `set exactly one of role and instanceProfile`},
	{"role given as an ARN", baseAWSClass, `spec: {role: "arn:aws:iam::123456789012:role/NodeRole"}`, `role must be an IAM role name such as StratosNodeRole, not an ARN`},
	{"role name of 65 characters", baseAWSClass, "spec: {role: " + name64 + "a}", `spec.role: Too long: may not be more than 64 bytes`},
	{"instance profile given as an ARN", baseAWSClass, `spec: {role: null, instanceProfile: "arn:aws:iam::123456789012:instance-profile/Nodes"}`, `instanceProfile must be an IAM instance profile name, not an ARN`},
	{"no AMI selector terms", baseAWSClass, `spec: {amiSelectorTerms: []}`, `spec.amiSelectorTerms in body should have at least 1 items`},
	{"AMI term with alias and id", baseAWSClass, `spec: {amiSelectorTerms: [{alias: al2023@latest, id: ami-0123456789abcdef0}]}`, `an AMI selector term needs exactly one of alias, id, or name and tags`},
	{"AMI alias beside another term", baseAWSClass, `spec: {amiSelectorTerms: [{alias: al2023@latest}, {id: ami-0123456789abcdef0}]}`, `an AMI alias must be the only AMI selector term`},
	{"unknown AMI family", baseAWSClass, `spec: {amiSelectorTerms: [{alias: ubuntu@latest}]}`, `alias must be al2023 or bottlerocket followed by @latest or @vX.Y.Z`},
	{"amiFamily AL2023 with a Bottlerocket alias", baseAWSClass, `spec: {amiFamily: AL2023, amiSelectorTerms: [{alias: bottlerocket@latest}]}`, `amiFamily must agree with the AMI alias`},
	{"amiFamily Bottlerocket with an AL2023 alias", baseAWSClass, `spec: {amiFamily: Bottlerocket}`, `amiFamily must agree with the AMI alias`},
	{"amiFamily Custom with an alias", baseAWSClass, `spec: {amiFamily: Custom}`, `amiFamily must agree with the AMI alias`},
	{"amiFamily AL2, which Stratos does not support", baseAWSClass, `spec: {amiFamily: AL2, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}`, `Unsupported value: "AL2"`},
	{"amiFamily Windows2022", baseAWSClass, `spec: {amiFamily: Windows2022, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}`, `Unsupported value: "Windows2022"`},
	{"amiFamily in lowercase", baseAWSClass, `spec: {amiFamily: bottlerocket, amiSelectorTerms: [{id: ami-0123456789abcdef0}]}`, `Unsupported value: "bottlerocket"`},
	{"malformed AMI ID", baseAWSClass, `spec: {amiSelectorTerms: [{id: ami-XYZ}]}`, `id must be an AMI ID such as ami-0123456789abcdef0`},
	{"subnet term with id and tags", baseAWSClass, `spec: {subnetSelectorTerms: [{id: subnet-0123456789abcdef0, tags: {a: b}}]}`, `a subnet selector term needs exactly one of id and tags`},
	{"malformed security group ID", baseAWSClass, `spec: {securityGroupSelectorTerms: [{id: group-1}]}`, `id must be a security group ID such as sg-0123456789abcdef0`},
	{"iops on gp2", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeType: gp2, iops: 3000}}]}`, `iops applies only to io1, io2 and gp3 volumes`},
	{"throughput on io2", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeType: io2, throughput: 500}}]}`, `throughput applies only to gp3 volumes`},
	{"volume of 100Ti", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: 100Ti}}]}`, `volumeSize must be from 1Gi to 64Ti`},
	{"gp3 below its baseline iops", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeType: gp3, iops: 1000}}]}`, `gp3 volumes take from 3000 to 80000 iops`},
	{"gp3 above its most iops", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {iops: 100000}}]}`, `gp3 volumes take from 3000 to 80000 iops`},
	{"io1 above its most iops", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeType: io1, iops: 100000}}]}`, `io1 volumes take at most 64000 iops`},
	{"volume of 0", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, ebs: {volumeSize: "0"}}]}`, `volumeSize must be from 1Gi to 64Ti`},
	{"user data above EC2's 16 KiB", baseAWSClass, "spec: {userData: " + strings.Repeat("x", 16385) + "}", `spec.userData: Too long: may not be more than 16384 bytes`},
	{"two root volumes", baseAWSClass, `spec: {blockDeviceMappings: [{deviceName: /dev/xvda, rootVolume: true, ebs: {}}, {deviceName: /dev/xvdb, rootVolume: true, ebs: {}}]}`, `at most one block device may be the root volume`},
	{"reserved instance tag", baseAWSClass, `spec: {tags: {stratos.sh/cluster: mine}}`, `tag keys under stratos.sh/ and kubernetes.io/cluster/ are reserved`},
	{"cluster tag of another cluster", baseAWSClass, `spec: {tags: {kubernetes.io/cluster/other: owned}}`, `tag keys under stratos.sh/ and kubernetes.io/cluster/ are reserved`},
	{"tag under aws:", baseAWSClass, `spec: {tags: {"aws:cloudformation:stack-name": nodes}}`, `tag keys starting with aws: are reserved for AWS`},
	{"tag under AWS: in capitals", baseAWSClass, `spec: {tags: {"AWS:owner": me}}`, `tag keys starting with aws: are reserved for AWS`},
	{"tag key of 129 characters", baseAWSClass, "spec: {tags: {" + strings.Repeat("k", 129) + ": x}}", `tag keys must be 1 to 128 characters and values at most 256`},
	{"tag value of 257 characters", baseAWSClass, "spec: {tags: {team: " + strings.Repeat("v", 257) + "}}", `tag keys must be 1 to 128 characters and values at most 256`},
	{"46 tags, past EC2's 50 with Stratos's own", baseAWSClass, "spec: {tags: " + manyTags(46) + "}", `spec.tags: Too many: 46: must have at most 45 items`},
	{"IMDS hop limit of 0", baseAWSClass, `spec: {metadataOptions: {httpPutResponseHopLimit: 0}}`, `should be greater than or equal to 1`},
	{"unknown IMDS token mode", baseAWSClass, `spec: {metadataOptions: {httpTokens: sometimes}}`, `Unsupported value: "sometimes"`},
	// FakeNodeClass.
	{"jitter above 100 percent", baseFakeClass, `spec: {physics: {jitterPercent: 150}}`, `should be less than or equal to 100`},
	{"physics delay in words", baseFakeClass, `spec: {physics: {launchDelay: fast}}`, `must be a duration such as 30s, 10m or 1h30m`},
	{"fault on an unknown operation", baseFakeClass, `spec: {faults: {errors: [{operation: Reboot, percent: 10}]}}`, `Unsupported value: "Reboot"`},
	{"fault above 100 percent", baseFakeClass, `spec: {faults: {errors: [{operation: Start, percent: 101}]}}`, `should be less than or equal to 100`},
	{"empty capacity fault", baseFakeClass, `spec: {faults: {insufficientCapacity: [{}]}}`, `an offering needs an instanceType, a zone or both`},
}

// invalidUpdate is a valid object that becomes invalid when patched after creation.
type invalidUpdate struct {
	name   string
	base   string
	patch  string
	status bool // the patch goes to the status subresource
	want   string
}

var invalidUpdates = []invalidUpdate{
	{name: "claim moved to another pool", base: baseClaim, patch: `{"spec":{"nodePool":"other"}}`, want: `nodePool is immutable`},
	{name: "claim given another node class", base: baseClaim, patch: `{"spec":{"nodeClassRef":{"name":"other"}}}`, want: `nodeClassRef is immutable`},
	{name: "claim given taints after creation", base: baseClaim, patch: `{"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]}}`, want: `only desiredState may change after a claim is created`},
	{name: "claim status with an unknown phase", base: baseClaim, patch: `{"status":{"phase":"Sleeping"}}`, status: true, want: `Unsupported value: "Sleeping"`},
}
