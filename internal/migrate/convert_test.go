package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// TestConvert converts Karpenter manifests of every documented shape (testdata, written
// from Karpenter's published API) and checks the exact Stratos objects against the
// reviewed golden files and the exact report: every entry's outcome, object and field,
// and every workload finding. The entries' messages are prose for people; each is
// checked to be there.
func TestConvert(t *testing.T) {
	cases := []struct {
		name    string
		file    string
		golden  string
		standby *int32
		// want is "outcome|object|field" for each report entry, and
		// "workload|kind namespace/name|field|key|stratos key" for each workload finding.
		want []string
	}{
		{
			name:    "Karpenter's getting-started pool and class: keys renamed, defaults spelled out, a warm pool proposed",
			file:    "getting-started.yaml",
			golden:  "getting-started.golden.yaml",
			standby: ptr.To[int32](2),
			want: []string{
				"kept|EC2NodeClass default|spec.securityGroupSelectorTerms[0].tags[karpenter.sh/discovery]",
				"kept|EC2NodeClass default|spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]",
				"changed|NodePool default|spec.disruption.budgets",
				"proposed|NodePool default|spec.standby",
				"changed|NodePool default|spec.template.spec.requirements[2]",
				"changed|NodePool default|spec.template.spec.requirements[3]",
				"changed|NodePool default|spec.template.spec.requirements[4]",
			},
		},
		{
			name:    "a GPU pool: taints, startup taints, GPU limits, weight, Bottlerocket alias, disks and metadata options",
			file:    "gpu.yaml",
			golden:  "gpu.golden.yaml",
			standby: nil,
			want: []string{
				"changed|NodePool gpu|spec.disruption.budgets",
				"changed|NodePool gpu|spec.template.spec.requirements[0]",
				"changed|NodePool gpu|spec.template.spec.requirements[1]",
				"changed|NodePool gpu|spec.template.spec.requirements[2]",
			},
		},
		{
			name:    "a spot-only pool: standby opens it to on-demand; scheduled budgets with reasons; minValues kept, dropped on the zone and above the values",
			file:    "spot.yaml",
			golden:  "spot.golden.yaml",
			standby: ptr.To[int32](2),
			want: []string{
				"proposed|NodePool spot|spec.standby",
				"proposed|NodePool spot|spec.standby.requirements",
				"changed|NodePool spot|spec.template.spec.nodeClassRef",
				"changed|NodePool spot|spec.template.spec.requirements[0]",
				"changed|NodePool spot|spec.template.spec.requirements[1]",
				"unmapped|NodePool spot|spec.template.spec.requirements[2].minValues",
				"changed|NodePool spot|spec.template.spec.requirements[3]",
				"unmapped|NodePool spot|spec.template.spec.requirements[3].minValues",
			},
		},
		{
			name:    "kubelet settings on the class move onto both pools; custom labels required with In and one value become template labels",
			file:    "kubelet.yaml",
			golden:  "kubelet.golden.yaml",
			standby: nil,
			want: []string{
				"changed|EC2NodeClass tuned|spec.kubelet",
				"unmapped|EC2NodeClass tuned|spec.kubelet.clusterDNS",
				"unmapped|EC2NodeClass tuned|spec.kubelet.cpuCFSQuota",
				"unmapped|EC2NodeClass tuned|spec.kubelet.evictionMaxPodGracePeriod",
				"unmapped|EC2NodeClass tuned|spec.kubelet.podsPerCore",
				"kept|EC2NodeClass tuned|spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]",
				"changed|NodePool team-a|spec.disruption.budgets",
				"changed|NodePool team-a|spec.template.spec.kubelet",
				"changed|NodePool team-a|spec.template.spec.requirements[0]",
				"unmapped|NodePool team-a|spec.template.spec.requirements[1]",
				"unmapped|NodePool team-a|spec.template.spec.requirements[2]",
				"changed|NodePool team-b|spec.disruption.budgets",
				"changed|NodePool team-b|spec.template.spec.kubelet",
			},
		},
		{
			name:    "every field with no Stratos counterpart is reported; Windows skips its class and pool",
			file:    "unmappable.yaml",
			golden:  "unmappable.golden.yaml",
			standby: nil,
			want: []string{
				"changed|EC2NodeClass odd|spec.amiSelectorTerms[0]",
				"unmapped|EC2NodeClass odd|spec.associatePublicIPAddress",
				"unmapped|EC2NodeClass odd|spec.capacityReservationSelectorTerms",
				"unmapped|EC2NodeClass odd|spec.context",
				"unmapped|EC2NodeClass odd|spec.detailedMonitoring",
				"unmapped|EC2NodeClass odd|spec.enclaveOptions",
				"unmapped|EC2NodeClass odd|spec.futureField",
				"unmapped|EC2NodeClass odd|spec.instanceStorePolicy",
				"unmapped|EC2NodeClass odd|spec.ipPrefixCount",
				"changed|EC2NodeClass odd|spec.role",
				"unmapped|EC2NodeClass odd|spec.tags[aws:cloudformation:stack-name]",
				"unmapped|EC2NodeClass odd|spec.tags[kubernetes.io/cluster/prod]",
				"skipped|EC2NodeClass windows|",
				"changed|NodePool odd|spec.disruption.budgets",
				"changed|NodePool odd|spec.disruption.consolidateAfter",
				"unmapped|NodePool odd|spec.replicas",
				"unmapped|NodePool odd|spec.template.spec.requirements[0]",
				"changed|NodePool odd|spec.template.spec.requirements[1]",
				"unmapped|NodePool odd|spec.template.spec.requirements[1]",
				"unmapped|NodePool odd|spec.template.spec.requirements[2]",
				"changed|NodePool odd|spec.template.spec.requirements[3]",
				"changed|NodePool odd|spec.template.spec.requirements[3]",
				"unmapped|NodePool odd|spec.template.spec.terminationGracePeriod",
				"skipped|NodePool windows|",
			},
		},
		{
			name:    "images by ID and tags: amiFamily AL2023 and Bottlerocket carried as they are",
			file:    "custom-images.yaml",
			golden:  "custom-images.golden.yaml",
			standby: nil,
			want: []string{
				"kept|EC2NodeClass golden|spec.securityGroupSelectorTerms[0].tags[karpenter.sh/discovery]",
				"kept|EC2NodeClass golden|spec.subnetSelectorTerms[0].tags[karpenter.sh/discovery]",
			},
		},
		{
			name:    "Karpenter's v1beta1 shape: kubelet on the pool, expireAfter in disruption, a family without terms",
			file:    "v1beta1.yaml",
			golden:  "v1beta1.golden.yaml",
			standby: nil,
			want: []string{
				"changed|EC2NodeClass legacy|spec.amiFamily",
				"changed|NodePool legacy|spec.disruption.budgets",
				"changed|NodePool legacy|spec.disruption.consolidationPolicy",
				"changed|NodePool legacy|spec.disruption.expireAfter",
			},
		},
		{
			name:    "workloads that use Karpenter labels, an owned pod left to its owner, objects that are neither",
			file:    "workloads.yaml",
			golden:  "",
			standby: nil,
			want: []string{
				"skipped|ConfigMap shop/settings|",
				"skipped|Provisioner ancient|",
				"workload|CronJob shop/report|spec.jobTemplate.spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]|karpenter.sh/nodepool|stratos.sh/nodepool",
				"workload|CronJob shop/report|spec.jobTemplate.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]|karpenter.k8s.aws/instance-family|stratos.sh/instance-family",
				"workload|CronJob shop/report|spec.jobTemplate.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]|karpenter.k8s.aws/instance-local-nvme|",
				"workload|CronJob shop/report|spec.jobTemplate.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey|karpenter.k8s.aws/instance-cpu|stratos.sh/instance-cpu",
				"workload|Deployment shop/web|spec.template.metadata.annotations|karpenter.sh/do-not-disrupt|stratos.sh/do-not-disrupt",
				"workload|Deployment shop/web|spec.template.spec.nodeSelector|karpenter.sh/capacity-type|stratos.sh/capacity-type",
				"workload|Deployment shop/web|spec.template.spec.topologySpreadConstraints[0].topologyKey|karpenter.sh/capacity-type|stratos.sh/capacity-type",
				"workload|Pod default/bare|spec.nodeSelector|karpenter.sh/capacity-type|stratos.sh/capacity-type",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := convertFile(t, tc.file, Options{Standby: tc.standby})
			var got []string
			for _, e := range res.Report.Entries {
				if e.Message == "" {
					t.Errorf("entry %s %s has no message", e.Object, e.Field)
				}
				got = append(got, fmt.Sprintf("%s|%s|%s", e.Outcome, e.Object, e.Field))
			}
			for _, w := range res.Report.Workloads {
				got = append(got, fmt.Sprintf("workload|%s %s/%s|%s|%s|%s", w.Kind, w.Namespace, w.Name, w.Field, w.Key, w.Stratos))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			var out bytes.Buffer
			if err := res.WriteYAML(&out); err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.golden != "" {
				data, err := os.ReadFile(filepath.Join("testdata", tc.golden))
				if err != nil {
					t.Fatal(err)
				}
				want = string(data)
			}
			if diff := cmp.Diff(documents(t, want), documents(t, out.String())); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func convertFile(t *testing.T, name string, opts Options) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objects, err := Decode(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return Convert(objects, opts)
}

// documents parses a YAML stream into its objects, for a comparison that ignores layout.
func documents(t *testing.T, stream string) []map[string]any {
	t.Helper()
	objects, err := Decode(bytes.NewBufferString(stream), "stream")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, o := range objects {
		out = append(out, o.Raw)
	}
	return out
}
