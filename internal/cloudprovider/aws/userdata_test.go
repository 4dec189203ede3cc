package aws

import (
	"flag"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stratos-sh/stratos/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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

func TestUserDataRegistersTheNodeWithLabelsAndTaints(t *testing.T) {
	doc, err := userData("prod", testClusterDetails,
		map[string]string{"b": "2", "a": "1", "stratos.sh/nodepool": "web"},
		[]corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoExecute}},
		nil)
	if err != nil {
		t.Fatal(err)
	}
	types, bodies := readParts(t, doc)
	if !slices.Equal(types, []string{"application/node.eks.aws"}) {
		t.Fatalf("parts %v, want one NodeConfig", types)
	}
	golden(t, "al2023-nodeconfig.yaml", bodies[0])
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
			doc, err := userData("prod", testClusterDetails, map[string]string{"a": "1"}, nil, &tc.own)
			if err != nil {
				t.Fatal(err)
			}
			types, bodies := readParts(t, doc)
			if !slices.Equal(types, append([]string{"application/node.eks.aws"}, tc.wantTypes...)) {
				t.Fatalf("parts %v, want the NodeConfig then %v", types, tc.wantTypes)
			}
			if !slices.Equal(bodies[1:], tc.wantBodies) {
				t.Fatalf("own parts %q, want %q", bodies[1:], tc.wantBodies)
			}
		})
	}
}

func TestUserDataRefusesABrokenMIMEDocument(t *testing.T) {
	own := "MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n"
	if _, err := userData("prod", testClusterDetails, nil, nil, &own); err == nil || !strings.Contains(err.Error(), "spec.userData") {
		t.Fatalf("userData = %v, want an error about spec.userData", err)
	}
}

// The same labels and taints make the same document, so the same launch template; other
// labels make another.
func TestUserDataIsStable(t *testing.T) {
	labels := map[string]string{"a": "1", "b": "2", "c": "3"}
	first, _ := userData("prod", testClusterDetails, labels, nil, nil)
	for range 10 {
		if again, _ := userData("prod", testClusterDetails, labels, nil, nil); again != first {
			t.Fatalf("the same labels made\n%s\nthen\n%s", first, again)
		}
	}
	if other, _ := userData("prod", testClusterDetails, map[string]string{"a": "1"}, nil, nil); other == first {
		t.Fatal("other labels made the same document")
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
	doc, err := bottlerocketUserData("prod", testClusterDetails,
		map[string]string{"stratos.sh/nodepool": "web"},
		[]corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}, {Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoExecute}},
		&own)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bottlerocket-settings.toml", doc)
}

func TestBottlerocketUserDataRefusesWhatIsNotTOML(t *testing.T) {
	own := "#!/bin/bash\necho hi\n"
	if _, err := bottlerocketUserData("prod", testClusterDetails, nil, nil, &own); err == nil || !strings.Contains(err.Error(), "settings TOML") {
		t.Fatalf("a shell script for Bottlerocket gave %v, want an error saying it takes settings TOML", err)
	}
}

// A class of Bottlerocket images launches with settings TOML; others with nodeadm's MIME.
func TestNodeUserDataFollowsTheImageFamily(t *testing.T) {
	class := &v1alpha1.AWSNodeClass{Status: v1alpha1.AWSNodeClassStatus{AMIs: []v1alpha1.ResolvedAMI{{ID: "ami-1", Architecture: "amd64", Family: FamilyBottlerocket}}}}
	doc, err := nodeUserData(class, "prod", testClusterDetails, map[string]string{"a": "1"}, nil)
	if err != nil || !strings.HasPrefix(doc, "[settings") {
		t.Fatalf("Bottlerocket user data %q, %v; want settings TOML", doc, err)
	}
	class.Status.AMIs[0].Family = "al2023"
	doc, err = nodeUserData(class, "prod", testClusterDetails, map[string]string{"a": "1"}, nil)
	if err != nil || !strings.HasPrefix(doc, "MIME-Version:") {
		t.Fatalf("AL2023 user data %q, %v; want a MIME document", doc, err)
	}
}
