package ec2machines

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// nodeConfigContentType is the MIME type of nodeadm's NodeConfig part on Amazon Linux 2023.
const nodeConfigContentType = "application/node.eks.aws"

// Registration is what a kubelet registers its Node with, as the instance's boot
// configuration tells it.
type Registration struct {
	Labels map[string]string
	Taints []corev1.Taint
}

// ParseUserData reads what an instance's kubelet registers with from its user data, as
// DescribeInstanceAttribute returns it (base64): a MIME multipart document whose
// application/node.eks.aws part is a NodeConfig whose spec.kubelet.flags hold
// --node-labels and --register-with-taints. It plays the part of nodeadm and the
// kubelet on a real node, and so checks what the operator sent; it shares no code with
// the operator's writer. The kubelet refuses labels that it may not set on its own Node
// (under kubernetes.io and k8s.io, outside the few it owns), and so does this.
func ParseUserData(encoded string) (Registration, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return Registration{}, fmt.Errorf("user data is not base64: %w", err)
	}
	config, err := nodeConfigPart(raw)
	if err != nil {
		return Registration{}, err
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Kubelet struct {
				Flags []string `json:"flags"`
			} `json:"kubelet"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return Registration{}, fmt.Errorf("the NodeConfig is not YAML: %w", err)
	}
	if doc.APIVersion != "node.eks.aws/v1alpha1" || doc.Kind != "NodeConfig" {
		return Registration{}, fmt.Errorf("the %s part is %s %s, want node.eks.aws/v1alpha1 NodeConfig", nodeConfigContentType, doc.APIVersion, doc.Kind)
	}
	reg := Registration{Labels: map[string]string{}}
	for _, flag := range doc.Spec.Kubelet.Flags {
		name, value, _ := strings.Cut(flag, "=")
		switch name {
		case "--node-labels":
			if reg.Labels, err = parseLabels(value); err != nil {
				return Registration{}, fmt.Errorf("--node-labels: %w", err)
			}
		case "--register-with-taints":
			if reg.Taints, err = parseTaints(value); err != nil {
				return Registration{}, fmt.Errorf("--register-with-taints: %w", err)
			}
		}
	}
	return reg, nil
}

// nodeConfigPart returns the body of the one NodeConfig part of a MIME multipart document.
func nodeConfigPart(raw []byte) ([]byte, error) {
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
	var found []byte
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
		if found != nil {
			return nil, fmt.Errorf("user data has more than one %s part", nodeConfigContentType)
		}
		var body io.Reader = part
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, part)
		}
		if found, err = io.ReadAll(body); err != nil {
			return nil, fmt.Errorf("reading the %s part: %w", nodeConfigContentType, err)
		}
	}
	if found == nil {
		return nil, fmt.Errorf("user data has no %s part", nodeConfigContentType)
	}
	return found, nil
}

// parseLabels parses the kubelet's --node-labels: key=value pairs separated by commas.
func parseLabels(value string) (map[string]string, error) {
	labels := map[string]string{}
	if value == "" {
		return labels, nil
	}
	for _, pair := range strings.Split(value, ",") {
		key, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", pair)
		}
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, fmt.Errorf("label key %q: %s", key, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(val); len(msgs) > 0 {
			return nil, fmt.Errorf("label %s value %q: %s", key, val, strings.Join(msgs, "; "))
		}
		if !kubeletMaySet(key) {
			return nil, fmt.Errorf("the kubelet may not set label %s on its Node: kubernetes.io and k8s.io labels are limited to its own and those under node.kubernetes.io and kubelet.kubernetes.io", key)
		}
		if _, dup := labels[key]; dup {
			return nil, fmt.Errorf("label %s is set twice", key)
		}
		labels[key] = val
	}
	return labels, nil
}

// kubeletOwnLabels are the kubernetes.io labels a kubelet may set on its Node.
var kubeletOwnLabels = []string{
	corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	corev1.LabelInstanceType, corev1.LabelInstanceTypeStable, corev1.LabelOSStable, corev1.LabelArchStable,
	"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
}

// kubeletMaySet reports whether a kubelet accepts the label key in --node-labels: keys
// outside the kubernetes.io and k8s.io namespaces, its own labels, and those under
// node.kubernetes.io and kubelet.kubernetes.io.
func kubeletMaySet(key string) bool {
	namespace, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}
	reserved := false
	for _, domain := range []string{"kubernetes.io", "k8s.io"} {
		if namespace == domain || strings.HasSuffix(namespace, "."+domain) {
			reserved = true
		}
	}
	return !reserved || slices.Contains(kubeletOwnLabels, key) ||
		namespace == "node.kubernetes.io" || namespace == "kubelet.kubernetes.io"
}

// parseTaints parses the kubelet's --register-with-taints: key[=value]:Effect separated
// by commas.
func parseTaints(value string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	if value == "" {
		return nil, nil
	}
	for _, spec := range strings.Split(value, ",") {
		keyValue, effect, ok := strings.Cut(spec, ":")
		if !ok {
			return nil, fmt.Errorf("%q has no effect", spec)
		}
		key, val, _ := strings.Cut(keyValue, "=")
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("%q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", spec, effect)
		}
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, fmt.Errorf("taint key %q: %s", key, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(val); len(msgs) > 0 {
			return nil, fmt.Errorf("taint %s value %q: %s", key, val, strings.Join(msgs, "; "))
		}
		taint := corev1.Taint{Key: key, Value: val, Effect: corev1.TaintEffect(effect)}
		if slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) }) {
			return nil, fmt.Errorf("taint %s:%s is set twice", key, effect)
		}
		taints = append(taints, taint)
	}
	return taints, nil
}
