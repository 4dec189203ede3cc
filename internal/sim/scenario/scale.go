package scenario

// ScaleCounts bound what Stratos costs as the cluster grows: its memory, the time of
// its provisioning passes, its API writes and its cloud calls, so far in the run. They
// are the targets of a scale scenario (docs/simulator.md).
type ScaleCounts struct {
	// OperatorPeakRSSMiB bounds the operator's peak resident memory, in MiB rounded up.
	OperatorPeakRSSMiB *Count `json:"operatorPeakRSSMiB,omitempty"`
	// DecisionP99Millis bounds the p99 of the operator's provisioning passes, in wall
	// milliseconds rounded up, from its stratos_provisioning_duration_seconds histogram.
	DecisionP99Millis *Count `json:"decisionP99Millis,omitempty"`
	// APIWritesPerNode bounds the operator's API writes (Events included) over the nodes
	// launched or started from standby, rounded up.
	APIWritesPerNode *Count `json:"apiWritesPerNode,omitempty"`
	// NodePoolStatusWritesPerSecond bounds the status writes of the most written
	// NodePool per second in its busiest 10 seconds, rounded up.
	NodePoolStatusWritesPerSecond *Count `json:"nodePoolStatusWritesPerSecond,omitempty"`
	// CloudCallsPerMinute bounds an operation's cloud calls in the operator's busiest
	// minute of wall time: a bound that does not grow with the nodes says the calls do
	// not either.
	CloudCallsPerMinute []OperationCount `json:"cloudCallsPerMinute,omitempty"`
}

// OperationCount bounds a figure of one cloud operation, as the report's cloudCalls
// names it: Get, List, Create… on the fake cloud, ec2:DescribeInstances… on aws.
type OperationCount struct {
	Operation string `json:"operation"`
	Count     `json:",inline"`
}
