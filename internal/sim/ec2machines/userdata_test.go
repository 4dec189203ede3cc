package ec2machines

import (
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// mimeDocument writes user data by hand as EC2 would hold it: a MIME multipart document
// with the given parts (content type → body), base64-encoded.
func mimeDocument(newline string, parts ...[2]string) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s + newline) }
	line("MIME-Version: 1.0")
	line(`Content-Type: multipart/mixed; boundary="//"`)
	line("")
	for _, p := range parts {
		line("--//")
		line("Content-Type: " + p[0])
		line("")
		for _, l := range strings.Split(p[1], "\n") {
			line(l)
		}
	}
	line("--//--")
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

func nodeConfig(flags ...string) [2]string {
	var b strings.Builder
	b.WriteString("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: sim\n  kubelet:\n    flags:\n")
	for _, f := range flags {
		b.WriteString("      - " + f + "\n")
	}
	return [2]string{"application/node.eks.aws", b.String()}
}

func TestParseUserData(t *testing.T) {
	script := [2]string{"text/x-shellscript; charset=\"us-ascii\"", "#!/bin/bash\necho --node-labels=not=this"}
	for _, c := range []struct {
		name     string
		userData string
		labels   map[string]string
		taints   []corev1.Taint
	}{
		{
			name: "labels and taints, with a user's script before",
			userData: mimeDocument("\n", script, nodeConfig(
				`"--node-labels=stratos.sh/nodepool=demo,stratos.sh/nodeclaim=demo-abc,node.kubernetes.io/lifecycle=spot"`,
				`"--register-with-taints=stratos.sh/standby:NoSchedule,dedicated=gpu:NoExecute"`,
				`--v=2`)),
			labels: map[string]string{"stratos.sh/nodepool": "demo", "stratos.sh/nodeclaim": "demo-abc", "node.kubernetes.io/lifecycle": "spot"},
			taints: []corev1.Taint{{Key: "stratos.sh/standby", Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}},
		},
		{
			name:     "CRLF line ends",
			userData: mimeDocument("\r\n", nodeConfig(`--node-labels=a=1`)),
			labels:   map[string]string{"a": "1"},
		},
		{
			name:     "no flags",
			userData: mimeDocument("\n", nodeConfig()),
			labels:   map[string]string{},
		},
		{
			name:     "empty label value",
			userData: mimeDocument("\n", nodeConfig(`--node-labels=a=`)),
			labels:   map[string]string{"a": ""},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg, err := ParseUserData(c.userData)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(reg.Labels, c.labels) {
				t.Errorf("labels %v, want %v", reg.Labels, c.labels)
			}
			if !slices.Equal(reg.Taints, c.taints) {
				t.Errorf("taints %v, want %v", reg.Taints, c.taints)
			}
		})
	}
}

func TestParseUserDataRefuses(t *testing.T) {
	for _, c := range []struct {
		name, userData, want string
	}{
		{"not base64", "%%%", "not base64"},
		{"a shell script, neither MIME nor TOML", base64.StdEncoding.EncodeToString([]byte("#!/bin/bash\necho hi\n")), "neither a MIME document nor Bottlerocket settings TOML"},
		{"MIME but not multipart", base64.StdEncoding.EncodeToString([]byte("Content-Type: text/plain\n\nhi\n")), "want a multipart document"},
		{"no NodeConfig part", mimeDocument("\n", [2]string{"text/x-shellscript", "#!/bin/bash"}), "no application/node.eks.aws part"},
		{"another kind", mimeDocument("\n", [2]string{"application/node.eks.aws", "apiVersion: v1\nkind: ConfigMap"}), "want node.eks.aws/v1alpha1 NodeConfig"},
		{"a label without a value", mimeDocument("\n", nodeConfig(`--node-labels=a`)), `"a" is not key=value`},
		{"a bad label key", mimeDocument("\n", nodeConfig(`--node-labels=a b=1`)), "label key"},
		{"a bad label value", mimeDocument("\n", nodeConfig(`--node-labels=a=b c`)), "value"},
		{"a label the kubelet may not set", mimeDocument("\n", nodeConfig(`--node-labels=node-role.kubernetes.io/worker=`)), "may not set label node-role.kubernetes.io/worker"},
		{"a label set twice", mimeDocument("\n", nodeConfig(`--node-labels=a=1,a=2`)), "set twice"},
		{"a taint without an effect", mimeDocument("\n", nodeConfig(`--register-with-taints=a=b`)), "has no effect"},
		{"a taint with a bad effect", mimeDocument("\n", nodeConfig(`--register-with-taints=a=b:Never`)), "effect"},
		{"a taint set twice", mimeDocument("\n", nodeConfig(`--register-with-taints=a=1:NoSchedule,a=2:NoSchedule`)), "set twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseUserData(c.userData)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

func TestKubeletMaySet(t *testing.T) {
	for key, want := range map[string]bool{
		"stratos.sh/nodepool":              true,
		"app":                              true,
		"kubernetes.io/arch":               true,
		"topology.kubernetes.io/zone":      true,
		"node.kubernetes.io/instance-type": true,
		"node.kubernetes.io/anything":      true,
		"kubelet.kubernetes.io/anything":   true,
		"node-role.kubernetes.io/worker":   false,
		"kubernetes.io/role":               false,
		"example.k8s.io/x":                 false,
		"k8s.io/x":                         false,
		"notkubernetes.io/x":               true,
	} {
		if got := kubeletMaySet(key); got != want {
			t.Errorf("%s: %v, want %v", key, got, want)
		}
	}
}

// FuzzParseUserData: no input makes the parser panic, and what it accepts are valid
// labels and taints.
func FuzzParseUserData(f *testing.F) {
	f.Add(mimeDocument("\n", nodeConfig(`--node-labels=a=1,b=2`, `--register-with-taints=c=d:NoSchedule`)))
	f.Add(mimeDocument("\r\n", [2]string{"text/x-shellscript", "#!/bin/sh"}, nodeConfig()))
	f.Add(base64.StdEncoding.EncodeToString([]byte("[settings.kubernetes]\ncluster-name = \"a\"\napi-server = \"b\"\nmax-pods = 3\n[settings.kubernetes.node-taints]\nx = [\":NoSchedule\"]\n")))
	f.Add("")
	f.Fuzz(func(t *testing.T, userData string) {
		reg, err := ParseUserData(userData)
		if err != nil {
			return
		}
		for key := range reg.Labels {
			if !kubeletMaySet(key) {
				t.Errorf("accepted label %s", key)
			}
		}
		for _, taint := range reg.Taints {
			if taint.Key == "" || taint.Effect == "" {
				t.Errorf("accepted taint %v", taint)
			}
		}
	})
}
