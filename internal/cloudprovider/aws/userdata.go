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

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// User data on AL2023 (and custom images): a MIME multipart document whose parts are the
// node class's own user data (a MIME document's parts as they are, a NodeConfig as one
// more NodeConfig part, anything else as a shell script), then the NodeConfig of nodeadm
// (content type application/node.eks.aws) that joins the cluster: its coordinates, the
// kubelet flags that register the Node with the claim's labels and taints, and the
// pool's kubelet configuration. nodeadm merges NodeConfig parts in order, a later one
// over an earlier one (kubelet flags appended, the kubelet configuration merged key by
// key), and the kubelet takes the last --register-with-taints: Stratos's part comes last
// so that what the pool sets wins over the class's user data, as on Bottlerocket.

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

// nodeJoin is what a node boots with, whatever its image: the cluster it joins, the
// labels and taints its kubelet registers the Node with, and the kubelet configuration
// (nil: the image's defaults).
type nodeJoin struct {
	clusterName string
	cluster     ClusterDetails
	labels      map[string]string
	taints      []corev1.Taint
	kubelet     *v1beta1.KubeletConfiguration
}

// userData returns the node's user data: the node class's own user data (nil: none),
// then the NodeConfig that joins the cluster.
func userData(join nodeJoin, classUserData *string) (string, error) {
	kubeletConfig, err := nodeadmKubeletConfig(join.kubelet)
	if err != nil {
		return "", err
	}
	config, err := yaml.Marshal(nodeadm.NodeConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: nodeadm.GroupVersion.String(), Kind: "NodeConfig"},
		Spec: nodeadm.NodeConfigSpec{
			Cluster: nodeadm.ClusterDetails{
				Name:                 join.clusterName,
				APIServerEndpoint:    join.cluster.Endpoint,
				CertificateAuthority: join.cluster.CertificateAuthority,
				CIDR:                 join.cluster.ServiceCIDR,
			},
			Kubelet: nodeadm.KubeletOptions{Config: kubeletConfig, Flags: kubeletFlags(join.labels, join.taints)},
		},
	})
	if err != nil {
		return "", err
	}
	var parts []userDataPart
	if classUserData != nil && strings.TrimSpace(*classUserData) != "" {
		own, err := classParts(*classUserData)
		if err != nil {
			return "", fmt.Errorf("spec.userData: %w", err)
		}
		parts = append(parts, own...)
	}
	parts = append(parts, userDataPart{contentType: contentTypeNodeConfig, body: config})
	return mimeDocument(parts)
}

// kubeletFlags register the Node with labels (those the kubelet may set) and taints, in
// a stable order.
func kubeletFlags(labels map[string]string, taints []corev1.Taint) []string {
	var flags []string
	labels = cloudprovider.RegistrationLabels(labels)
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
