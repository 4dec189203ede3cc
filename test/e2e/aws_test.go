package e2e

import (
	"strings"
	"testing"

	"github.com/stratos-sh/stratos/internal/sim/report"
)

// checkAWS asserts what every scenario on aws must show beyond a clean run: that it ran
// on moto, that the operator's EC2 calls reached it through the counting proxy, and
// that the simulator's kubelets polled moto on their own account.
func checkAWS(t *testing.T, rep *report.Report) {
	t.Helper()
	if rep.Cloud != "aws" {
		t.Errorf("ran on %q, want aws", rep.Cloud)
	}
	for call := range rep.CloudCalls {
		if !strings.Contains(call, ":") {
			t.Errorf("cloud call %q is not named service:Action", call)
		}
	}
	if rep.CloudCalls["ec2:CreateFleet"] == 0 {
		t.Errorf("cloud calls %v: no launch", rep.CloudCalls)
	}
	if rep.SimulatorCloudCalls["DescribeInstances"] == 0 {
		t.Errorf("the simulator's kubelets never described moto's instances: %v", rep.SimulatorCloudCalls)
	}
}

// TestQuickstartOnAWS runs the demo's scenario against moto with the EC2 provider, five
// times faster than real time: the same file as on the fake cloud, its FakeNodeClass
// made an EC2NodeClass by the simulator.
func TestQuickstartOnAWS(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "quickstart.yaml", "--time-scale=5", "--cloud=aws")
	checkClean(t, rep, 40)
	checkAWS(t, rep)
	if rep.Nodes.StartedFromStandby < 5 {
		t.Errorf("started from standby: %d, want at least the pool's 5", rep.Nodes.StartedFromStandby)
	}
	if rep.CloudCalls["ec2:CreateFleet"] < 5 || rep.CloudCalls["ec2:StartInstances"] == 0 || rep.CloudCalls["ec2:StopInstances"] == 0 {
		t.Errorf("cloud calls %v: want at least the 5 warm launches, starts and stops", rep.CloudCalls)
	}
	if rep.Provisioning.StartCallLatencySeconds.Max <= 0 {
		t.Errorf("the start-call latency was not measured: %+v", rep.Provisioning.StartCallLatencySeconds)
	}
	checkServedFromStandbyFaster(t, rep)
	t.Logf("quickstart on aws at 5x: pods p50 %.1fs p99 %.1fs (scenario time), wall %.0fs; EC2 calls %v; failed %v",
		rep.Pods.LatencySeconds.P50, rep.Pods.LatencySeconds.P99, rep.WallSeconds, rep.CloudCalls, rep.CloudErrors)
}

// TestGiveBackOnAWS runs give-back.yaml against moto: five cold launches, the nodes
// stopped into standby when the load goes, and started for the second burst. It runs at
// twice real time, not five: the give-back waits on the operator's consolidateAfter and
// drains, which run in real time, and its two minutes (one at 2x) leave them room where
// 24 s at 5x do not, on either cloud.
func TestGiveBackOnAWS(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "give-back.yaml", "--time-scale=2", "--cloud=aws")
	checkClean(t, rep, 70)
	checkAWS(t, rep)
	if rep.Nodes.LaunchedCold != 5 || rep.Nodes.StartedFromStandby != 5 {
		t.Errorf("launched cold %d, started from standby %d; want 5 and 5", rep.Nodes.LaunchedCold, rep.Nodes.StartedFromStandby)
	}
	if rep.CloudCalls["ec2:StopInstances"] == 0 || rep.CloudCalls["ec2:StartInstances"] == 0 {
		t.Errorf("cloud calls %v: want the stops of the give-back and the starts of the second burst", rep.CloudCalls)
	}
	t.Logf("give-back on aws at 2x: pods p50 %.1fs p99 %.1fs (scenario time), wall %.0fs; EC2 calls %v; failed %v",
		rep.Pods.LatencySeconds.P50, rep.Pods.LatencySeconds.P99, rep.WallSeconds, rep.CloudCalls, rep.CloudErrors)
}

// TestKubeletConfigurationOnAWS runs kubelet-aws.yaml against moto: three pools warm four
// m5.large nodes, two of them with labels, a taint and a kubelet configuration, one pool
// on AL2023 (20 pods, 1Gi kube-reserved memory), one on Bottlerocket (12 pods, eviction at
// 500Mi, a taint without a value). The simulator's kubelets register each Node from the
// user data its instance was launched with, so the scenario's nodes condition holding
// shows that the labels, the taints and the kubelet settings travelled through EC2 in
// both forms. Each pool's claims launch from one template of their own.
func TestKubeletConfigurationOnAWS(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "kubelet-aws.yaml", "--time-scale=5", "--cloud=aws")
	wantOK(t, rep)
	checkAWS(t, rep)
	if rep.CloudCalls["ec2:CreateFleet"] != 4 || rep.CloudCalls["ec2:CreateLaunchTemplate"] != 3 {
		t.Errorf("cloud calls %v: want 4 launches from 3 templates, one per pool", rep.CloudCalls)
	}
	t.Logf("kubelet configuration on aws at 5x: wall %.0fs; EC2 calls %v", rep.WallSeconds, rep.CloudCalls)
}

// TestKarpenterMigratedOnAWS runs karpenter-migrated.yaml against moto: Karpenter's
// getting-started NodePool and EC2NodeClass as stratos migrate --standby=2 converts them
// (internal/migrate keeps the file equal to its output), the class selecting the
// simulated VPC by the karpenter.sh/discovery tag the guide uses. The pool warms two
// standby nodes and a small burst starts one of them instead of launching.
func TestKarpenterMigratedOnAWS(t *testing.T) {
	runInTurn(t)
	rep := simulate(t, "karpenter-migrated.yaml", "--time-scale=5", "--cloud=aws")
	wantOK(t, rep)
	checkAWS(t, rep)
	if rep.Nodes.StartedFromStandby == 0 || rep.Nodes.LaunchedCold != 0 {
		t.Errorf("started from standby %d, launched cold %d; want the burst served from standby", rep.Nodes.StartedFromStandby, rep.Nodes.LaunchedCold)
	}
	t.Logf("migrated getting-started pool on aws at 5x: wall %.0fs; EC2 calls %v", rep.WallSeconds, rep.CloudCalls)
}
