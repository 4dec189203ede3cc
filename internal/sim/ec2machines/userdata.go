package ec2machines

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// nodeConfigContentType is the MIME type of nodeadm's NodeConfig part on Amazon Linux 2023.
const nodeConfigContentType = "application/node.eks.aws"

// Registration is what a kubelet registers its Node with, as the instance's boot
// configuration tells it.
type Registration struct {
	Labels map[string]string
	Taints []corev1.Taint
	// Kubelet is the kubelet configuration the user data sets over the image's defaults.
	Kubelet KubeletSettings
}

// ParseUserData reads what an instance's kubelet registers with from its user data, as
// DescribeInstanceAttribute returns it (base64), in either form EKS's images read:
//
//   - Amazon Linux 2023: a MIME multipart document whose application/node.eks.aws parts
//     are nodeadm NodeConfigs, merged in order as nodeadm merges them: kubelet flags
//     appended (--node-labels and --register-with-taints), kubelet configuration
//     (spec.kubelet.config) merged key by key, the later part winning;
//   - Bottlerocket: settings TOML, whose settings.kubernetes holds node-labels,
//     node-taints and the kubelet's settings.
//
// It plays the part of nodeadm, Bottlerocket and the kubelet on a real node, and so
// checks what the operator sent; it shares no code with the operator's writer. The
// kubelet refuses labels that it may not set on its own Node (under kubernetes.io and
// k8s.io, outside the few it owns), and so does this.
func ParseUserData(encoded string) (Registration, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return Registration{}, fmt.Errorf("user data is not base64: %w", err)
	}
	if !isMIME(raw) {
		return parseBottlerocket(raw)
	}
	return parseNodeadm(raw)
}

// isMIME reports whether user data starts as a MIME document does; anything else is
// taken for Bottlerocket's TOML.
func isMIME(raw []byte) bool {
	head := strings.ToLower(string(bytes.TrimSpace(raw[:min(len(raw), 64)])))
	return strings.HasPrefix(head, "mime-version:") || strings.HasPrefix(head, "content-type:")
}

// nodeConfigDoc is the part of a NodeConfig the kubelet registers with.
type nodeConfigDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Kubelet struct {
			Config json.RawMessage `json:"config"`
			Flags  []string        `json:"flags"`
		} `json:"kubelet"`
	} `json:"spec"`
}

// parseNodeadm reads the NodeConfig parts of a MIME document as nodeadm does.
func parseNodeadm(raw []byte) (Registration, error) {
	parts, err := nodeConfigParts(raw)
	if err != nil {
		return Registration{}, err
	}
	var flags []string
	config := []byte("{}")
	for n, part := range parts {
		var doc nodeConfigDoc
		if err := yaml.Unmarshal(part, &doc); err != nil {
			return Registration{}, fmt.Errorf("NodeConfig %d is not YAML: %w", n+1, err)
		}
		if doc.APIVersion != "node.eks.aws/v1alpha1" || doc.Kind != "NodeConfig" {
			return Registration{}, fmt.Errorf("the %s part is %s %s, want node.eks.aws/v1alpha1 NodeConfig", nodeConfigContentType, doc.APIVersion, doc.Kind)
		}
		flags = append(flags, doc.Spec.Kubelet.Flags...)
		if len(doc.Spec.Kubelet.Config) > 0 && string(doc.Spec.Kubelet.Config) != "null" {
			// A JSON merge patch merges objects key by key, the later value winning, as
			// nodeadm merges NodeConfigs and the kubelet its configuration drop-ins.
			if config, err = jsonpatch.MergePatch(config, doc.Spec.Kubelet.Config); err != nil {
				return Registration{}, fmt.Errorf("NodeConfig %d: spec.kubelet.config: %w", n+1, err)
			}
		}
	}
	reg := Registration{Labels: map[string]string{}}
	for _, flag := range flags {
		name, value, _ := strings.Cut(flag, "=")
		switch name {
		case "--node-labels":
			// The kubelet merges repeated --node-labels, the later value of a key winning.
			labels, err := parseLabels(value)
			if err != nil {
				return Registration{}, fmt.Errorf("--node-labels: %w", err)
			}
			for k, v := range labels {
				reg.Labels[k] = v
			}
		case "--register-with-taints":
			// The kubelet takes the last --register-with-taints whole.
			if reg.Taints, err = parseTaints(value); err != nil {
				return Registration{}, fmt.Errorf("--register-with-taints: %w", err)
			}
		}
	}
	var settings nodeadmKubeletConfig
	if err := json.Unmarshal(config, &settings); err != nil {
		return Registration{}, fmt.Errorf("spec.kubelet.config: %w", err)
	}
	if reg.Kubelet, err = rawKubeletSettings(settings).check(); err != nil {
		return Registration{}, fmt.Errorf("spec.kubelet.config: %w", err)
	}
	return reg, nil
}

// nodeadmKubeletConfig are the KubeletConfiguration fields (kubelet.config.k8s.io/v1beta1)
// that change what the Node reports or that a pool sets, in the kubelet's types (the
// fields of rawKubeletSettings, in its order); others are left to the kubelet.
type nodeadmKubeletConfig struct {
	MaxPods                     *int64            `json:"maxPods"`
	KubeReserved                map[string]string `json:"kubeReserved"`
	SystemReserved              map[string]string `json:"systemReserved"`
	EvictionHard                map[string]string `json:"evictionHard"`
	EvictionSoft                map[string]string `json:"evictionSoft"`
	EvictionSoftGracePeriod     map[string]string `json:"evictionSoftGracePeriod"`
	ImageGCHighThresholdPercent *int64            `json:"imageGCHighThresholdPercent"`
	ImageGCLowThresholdPercent  *int64            `json:"imageGCLowThresholdPercent"`
}

// nodeConfigParts returns the bodies of the NodeConfig parts of a MIME multipart
// document, in order.
func nodeConfigParts(raw []byte) ([][]byte, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("user data is not a MIME document: %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("user data Content-Type: %w", err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") || params["boundary"] == "" {
		return nil, fmt.Errorf("user data is %s, want a multipart document with a boundary", mediaType)
	}
	reader := multipart.NewReader(msg.Body, params["boundary"])
	var found [][]byte
	for {
		part, err := reader.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the user data's parts: %w", err)
		}
		partType, _, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil || partType != nodeConfigContentType {
			continue
		}
		var body io.Reader = part
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, part)
		}
		content, err := io.ReadAll(body)
		if err != nil {
			return nil, fmt.Errorf("reading the %s part: %w", nodeConfigContentType, err)
		}
		found = append(found, content)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("user data has no %s part", nodeConfigContentType)
	}
	return found, nil
}
