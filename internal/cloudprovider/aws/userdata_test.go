package aws

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// readParts reads a MIME multipart document with the standard library, as cloud-init
// and nodeadm read user data: content type → bodies.
func readParts(t *testing.T, doc string) (types []string, bodies []string) {
	t.Helper()
	msg, err := mail.ReadMessage(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Header.Get("MIME-Version") != "1.0" {
		t.Fatalf("MIME-Version %q", msg.Header.Get("MIME-Version"))
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" {
		t.Fatalf("content type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	reader := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			return types, bodies
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(part)
		types = append(types, part.Header.Get("Content-Type"))
		bodies = append(bodies, string(body))
	}
}

// testJoin is a node of pool web joining a made-up EKS cluster, with no kubelet
// configuration.
func testJoin() nodeJoin {
	return nodeJoin{
		clusterName: "prod",
		cluster:     testClusterDetails,
		labels:      map[string]string{"b": "2", "a": "1", "stratos.sh/nodepool": "web"},
		taints:      []corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoExecute}},
	}
}

// testKubelet sets every field of the kubelet configuration.
func testKubelet() *v1beta1.KubeletConfiguration {
	return &v1beta1.KubeletConfiguration{
		MaxPods:                     ptr.To[int32](20),
		SystemReserved:              corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("200Mi")},
		KubeReserved:                corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")},
		EvictionHard:                map[string]v1beta1.EvictionThreshold{"memory.available": "500Mi", "nodefs.available": "15%"},
		EvictionSoft:                map[string]v1beta1.EvictionThreshold{"memory.available": "1Gi"},
		EvictionSoftGracePeriod:     map[string]v1beta1.Duration{"memory.available": {Duration: 90 * time.Second}},
		ImageGCHighThresholdPercent: ptr.To[int32](90),
		ImageGCLowThresholdPercent:  ptr.To[int32](70),
	}
}

func TestUserDataRegistersTheNodeWithLabelsAndTaints(t *testing.T) {
	doc, err := userData(testJoin(), nil)
	if err != nil {
		t.Fatal(err)
	}
	types, bodies := readParts(t, doc)
	if !slices.Equal(types, []string{"application/node.eks.aws"}) {
		t.Fatalf("parts %v, want one NodeConfig", types)
	}
	golden(t, "al2023-nodeconfig.yaml", bodies[0])
}

// The kubelet configuration goes into the NodeConfig's spec.kubelet.config under the
// kubelet's field names, and only what is set.
func TestUserDataCarriesTheKubeletConfiguration(t *testing.T) {
	join := testJoin()
	join.kubelet = testKubelet()
	doc, err := userData(join, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, bodies := readParts(t, doc)
	golden(t, "al2023-nodeconfig-kubelet.yaml", bodies[0])

	join.kubelet = &v1beta1.KubeletConfiguration{MaxPods: ptr.To[int32](8)}
	doc, err = userData(join, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, bodies = readParts(t, doc)
	var config struct {
		Spec struct {
			Kubelet struct {
				Config map[string]any `json:"config"`
			} `json:"kubelet"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(bodies[0]), &config); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"maxPods": float64(8)}; !maps.Equal(config.Spec.Kubelet.Config, want) {
		t.Errorf("spec.kubelet.config %v, want only %v", config.Spec.Kubelet.Config, want)
	}
}

// updateGolden rewrites the golden files with what the code writes now:
// go test ./internal/cloudprovider/aws/ -run UserData -update-golden
var updateGolden = flag.Bool("update-golden", false, "rewrite the golden files of testdata/userdata")

// golden compares got with the golden file testdata/userdata/name.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "userdata", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with -update-golden)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs from %s:\n%s", name, path, cmp.Diff(string(want), got))
	}
}

// The class's own user data comes first, Stratos's NodeConfig last: nodeadm merges the
// NodeConfigs in order, so that what the pool sets wins.
func TestUserDataAddsTheNodeClassOwn(t *testing.T) {
	script := "#!/bin/bash\necho hello\n"
	nodeConfig := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 50\n"
	mimeDoc := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n--XX\nContent-Type: text/x-shellscript\n\necho one\n--XX\nContent-Type: text/cloud-config\n\nruncmd: [two]\n--XX--\n"
	for _, tc := range []struct {
		name       string
		own        string
		wantTypes  []string
		wantBodies []string
	}{
		{"shell script", script, []string{`text/x-shellscript; charset="us-ascii"`}, []string{script}},
		{"NodeConfig", nodeConfig, []string{"application/node.eks.aws"}, []string{nodeConfig}},
		{"MIME document", mimeDoc, []string{"text/x-shellscript", "text/cloud-config"}, []string{"echo one", "runcmd: [two]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := userData(nodeJoin{clusterName: "prod", cluster: testClusterDetails, labels: map[string]string{"a": "1"}}, &tc.own)
			if err != nil {
				t.Fatal(err)
			}
			types, bodies := readParts(t, doc)
			if !slices.Equal(types, append(slices.Clone(tc.wantTypes), "application/node.eks.aws")) {
				t.Fatalf("parts %v, want %v then the NodeConfig", types, tc.wantTypes)
			}
			if own := bodies[:len(bodies)-1]; !slices.Equal(own, tc.wantBodies) {
				t.Fatalf("own parts %q, want %q", own, tc.wantBodies)
			}
		})
	}
}

func TestUserDataRefusesABrokenMIMEDocument(t *testing.T) {
	own := "MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n"
	if _, err := userData(nodeJoin{clusterName: "prod", cluster: testClusterDetails}, &own); err == nil || !strings.Contains(err.Error(), "spec.userData") {
		t.Fatalf("userData = %v, want an error about spec.userData", err)
	}
}

// The same labels, taints and kubelet configuration make the same document, so the same
// launch template, for either image family; other labels or another kubelet
// configuration make another.
func TestUserDataIsStable(t *testing.T) {
	for name, write := range map[string]func(nodeJoin, *string) (string, error){"AL2023": userData, "Bottlerocket": bottlerocketUserData} {
		t.Run(name, func(t *testing.T) {
			join := testJoin()
			join.kubelet = testKubelet()
			first, err := write(join, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				again := testJoin()
				again.kubelet = testKubelet()
				if doc, _ := write(again, nil); doc != first {
					t.Fatalf("the same node made\n%s\nthen\n%s", first, doc)
				}
			}
			other := testJoin()
			other.labels = map[string]string{"a": "1"}
			other.kubelet = testKubelet()
			if doc, _ := write(other, nil); doc == first {
				t.Fatal("other labels made the same document")
			}
			other = testJoin()
			other.kubelet = testKubelet()
			other.kubelet.KubeReserved[corev1.ResourceMemory] = resource.MustParse("2Gi")
			if doc, _ := write(other, nil); doc == first {
				t.Fatal("another kubelet configuration made the same document")
			}
		})
	}
}

// testClusterDetails are the coordinates of a made-up EKS cluster.
var testClusterDetails = ClusterDetails{
	Endpoint:             "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com",
	CertificateAuthority: []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
	ServiceCIDR:          "10.100.0.0/16",
}

func TestBottlerocketUserDataMergesTheClassSettings(t *testing.T) {
	own := `[settings.host-containers.admin]
enabled = true

[settings.kubernetes]
max-pods = 50

[settings.kubernetes.node-labels]
team = "platform"
`
	doc, err := bottlerocketUserData(testJoin(), &own)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bottlerocket-settings.toml", doc)
}

// The kubelet configuration goes into settings.kubernetes under Bottlerocket's names,
// over the class's own: the pool's value wins where both set one, and tables merge key
// by key.
func TestBottlerocketUserDataCarriesTheKubeletConfiguration(t *testing.T) {
	own := `[settings.kubernetes]
max-pods = 50
image-gc-high-threshold-percent = "95"

[settings.kubernetes.kube-reserved]
cpu = "300m"
memory = "3Gi"

[settings.kubernetes.node-taints]
gpu = ["false:NoSchedule"]
team = ["platform:NoSchedule"]
`
	join := testJoin()
	join.kubelet = testKubelet()
	doc, err := bottlerocketUserData(join, &own)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bottlerocket-settings-kubelet.toml", doc)
}

// Bottlerocket reserves cpu, memory and ephemeral storage; a pool that reserves pids
// cannot launch there, and is told so rather than sending settings Bottlerocket refuses.
func TestBottlerocketUserDataRefusesWhatItCannotReserve(t *testing.T) {
	join := testJoin()
	join.kubelet = &v1beta1.KubeletConfiguration{SystemReserved: corev1.ResourceList{"pid": resource.MustParse("1000")}}
	if _, err := bottlerocketUserData(join, nil); err == nil || !strings.Contains(err.Error(), "reserves pid") {
		t.Fatalf("a pid reservation on Bottlerocket gave %v, want an error naming it", err)
	}
}

func TestBottlerocketUserDataRefusesWhatIsNotTOML(t *testing.T) {
	own := "#!/bin/bash\necho hi\n"
	if _, err := bottlerocketUserData(testJoin(), &own); err == nil || !strings.Contains(err.Error(), "settings TOML") {
		t.Fatalf("a shell script for Bottlerocket gave %v, want an error saying it takes settings TOML", err)
	}
}

// A class of Bottlerocket images launches with settings TOML; others with nodeadm's MIME.
func TestNodeUserDataFollowsTheImageFamily(t *testing.T) {
	class := &v1beta1.EC2NodeClass{Status: v1beta1.EC2NodeClassStatus{AMIs: []v1beta1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64", Family: FamilyBottlerocket}}}}
	doc, err := nodeUserData(class, testJoin())
	if err != nil || !strings.HasPrefix(doc, "[settings") {
		t.Fatalf("Bottlerocket user data %q, %v; want settings TOML", doc, err)
	}
	class.Status.AMIs[0].Family = "al2023"
	doc, err = nodeUserData(class, testJoin())
	if err != nil || !strings.HasPrefix(doc, "MIME-Version:") {
		t.Fatalf("AL2023 user data %q, %v; want a MIME document", doc, err)
	}
}

// User data that Stratos's own part takes over EC2's 16 KiB is refused before a launch,
// with a message that says which part is the user's, though the class's part alone fits
// the schema's bound.
func TestNodeUserDataOverEC2sLimitIsRefused(t *testing.T) {
	own := "#!/bin/bash\n# " + strings.Repeat("x", maxUserData-200) + "\n"
	class := &v1beta1.EC2NodeClass{Spec: v1beta1.EC2NodeClassSpec{UserData: &own}}
	_, err := nodeUserData(class, testJoin())
	if err == nil || !strings.Contains(err.Error(), "over EC2's limit of 16384") || !strings.Contains(err.Error(), fmt.Sprintf("spec.userData is %d", len(own))) {
		t.Fatalf("user data over 16 KiB gave %v; want an error naming the limit and the class's part", err)
	}
	small := "#!/bin/bash\necho hi\n"
	class.Spec.UserData = &small
	if _, err := nodeUserData(class, testJoin()); err != nil {
		t.Fatalf("small user data refused: %v", err)
	}
}
