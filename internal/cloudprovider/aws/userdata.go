package aws

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"slices"
	"strings"

	nodeadm "github.com/awslabs/amazon-eks-ami/nodeadm/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// User data, until issue 17 brings nodeadm's own types: a MIME multipart document whose
// first part is a NodeConfig for nodeadm (content type application/node.eks.aws) with
// the kubelet flags that register the Node with the claim's labels and taints, followed
// by the node class's own user data: a MIME document's parts as they are, a NodeConfig
// as one more NodeConfig part (nodeadm merges them in order), anything else as a shell
// script.

// Content types of user data parts.
const (
	contentTypeNodeConfig  = "application/node.eks.aws"
	contentTypeShellScript = `text/x-shellscript; charset="us-ascii"`
)

// userDataPart is one part of a MIME multipart document.
type userDataPart struct {
	contentType string
	body        []byte
}

// userData returns the node's user data: the NodeConfig that registers it with labels
// and taints, then the node class's own user data (nil: none).
func userData(clusterName string, cluster ClusterDetails, labels map[string]string, taints []corev1.Taint, classUserData *string) (string, error) {
	config, err := yaml.Marshal(nodeadm.NodeConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: nodeadm.GroupVersion.String(), Kind: "NodeConfig"},
		Spec: nodeadm.NodeConfigSpec{
			Cluster: nodeadm.ClusterDetails{
				Name:                 clusterName,
				APIServerEndpoint:    cluster.Endpoint,
				CertificateAuthority: cluster.CertificateAuthority,
				CIDR:                 cluster.ServiceCIDR,
			},
			Kubelet: nodeadm.KubeletOptions{Flags: kubeletFlags(labels, taints)},
		},
	})
	if err != nil {
		return "", err
	}
	parts := []userDataPart{{contentType: contentTypeNodeConfig, body: config}}
	if classUserData != nil && strings.TrimSpace(*classUserData) != "" {
		own, err := classParts(*classUserData)
		if err != nil {
			return "", fmt.Errorf("spec.userData: %w", err)
		}
		parts = append(parts, own...)
	}
	return mimeDocument(parts)
}

// kubeletFlags register the Node with labels and taints, in a stable order.
func kubeletFlags(labels map[string]string, taints []corev1.Taint) []string {
	var flags []string
	if len(labels) > 0 {
		pairs := make([]string, 0, len(labels))
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			pairs = append(pairs, k+"="+labels[k])
		}
		flags = append(flags, "--node-labels="+strings.Join(pairs, ","))
	}
	if len(taints) > 0 {
		specs := make([]string, 0, len(taints))
		for _, t := range taints {
			spec := t.Key
			if t.Value != "" {
				spec += "=" + t.Value
			}
			specs = append(specs, spec+":"+string(t.Effect))
		}
		flags = append(flags, "--register-with-taints="+strings.Join(specs, ","))
	}
	return flags
}

// classParts splits a node class's user data into parts.
func classParts(data string) ([]userDataPart, error) {
	if strings.HasPrefix(strings.TrimSpace(data), "MIME-Version:") {
		return mimeParts(data)
	}
	var probe struct {
		APIVersion string `json:"apiVersion"`
	}
	if yaml.Unmarshal([]byte(data), &probe) == nil && strings.HasPrefix(probe.APIVersion, "node.eks.aws/") {
		return []userDataPart{{contentType: contentTypeNodeConfig, body: []byte(data)}}, nil
	}
	return []userDataPart{{contentType: contentTypeShellScript, body: []byte(data)}}, nil
}

// mimeParts reads the parts of a MIME multipart document.
func mimeParts(data string) ([]userDataPart, error) {
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading the MIME document: %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") || params["boundary"] == "" {
		return nil, fmt.Errorf("a MIME document must be multipart with a boundary, not %q", msg.Header.Get("Content-Type"))
	}
	reader := multipart.NewReader(msg.Body, params["boundary"])
	var parts []userDataPart
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part: %w", err)
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return nil, fmt.Errorf("reading a MIME part: %w", err)
		}
		contentType := part.Header.Get("Content-Type")
		if contentType == "" {
			contentType = "text/plain"
		}
		parts = append(parts, userDataPart{contentType: contentType, body: content})
	}
}

// mimeDocument writes parts as a MIME multipart document. The boundary is derived from
// the parts, so that the same parts make the same document (launch templates are named
// by their content) and no part can contain it.
func mimeDocument(parts []userDataPart) (string, error) {
	digest := sha256.New()
	for _, p := range parts {
		digest.Write([]byte(p.contentType))
		digest.Write(p.body)
	}
	boundary := "stratos-" + hex.EncodeToString(digest.Sum(nil))[:32]
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if err := w.SetBoundary(boundary); err != nil {
		return "", err
	}
	for _, p := range parts {
		part, err := w.CreatePart(textproto.MIMEHeader{"Content-Type": {p.contentType}})
		if err != nil {
			return "", err
		}
		if _, err := part.Write(p.body); err != nil {
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return fmt.Sprintf("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=%q\r\n\r\n%s", boundary, body.String()), nil
}
