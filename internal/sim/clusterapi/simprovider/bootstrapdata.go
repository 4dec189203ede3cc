package simprovider

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
)

// The kubelet flags a SimConfig's kubeletExtraArgs may carry that the simulated kubelet
// honours; the others are accepted and ignored, as the simulator has no use for them.
const (
	argNodeLabels = "node-labels"
	argMaxPods    = "max-pods"
)

// BootstrapData is what a SimConfig's data Secret holds under "value", as JSON: what the
// simulated kubelet registers the Node with. It stands for the cloud-init a real
// bootstrap provider writes; SimMachine reads it to launch the instance.
type BootstrapData struct {
	// Labels the kubelet registers the Node with (its --node-labels).
	Labels map[string]string `json:"labels,omitempty"`
	// Taints the kubelet registers the Node with (its --register-with-taints).
	Taints []corev1.Taint `json:"taints,omitempty"`
	// MaxPods is the kubelet's --max-pods; nil keeps the instance type's default.
	MaxPods *int32 `json:"maxPods,omitempty"`
}

// BootstrapDataFor turns a SimConfig's spec into bootstrap data, refusing what a
// kubelet would refuse to start with.
func BootstrapDataFor(spec v1alpha1.SimConfigSpec) (*BootstrapData, error) {
	reg := spec.JoinConfiguration.NodeRegistration
	data := &BootstrapData{}
	for _, t := range reg.Taints {
		data.Taints = append(data.Taints, *t.DeepCopy())
	}
	for _, arg := range reg.KubeletExtraArgs {
		switch arg.Name {
		case argNodeLabels:
			labels, err := parseNodeLabels(arg.Value)
			if err != nil {
				return nil, fmt.Errorf("kubeletExtraArgs %s: %w", argNodeLabels, err)
			}
			data.Labels = labels
		case argMaxPods:
			n, err := strconv.ParseInt(arg.Value, 10, 32)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("kubeletExtraArgs %s: %q is not a positive number", argMaxPods, arg.Value)
			}
			pods := int32(n)
			data.MaxPods = &pods
		}
	}
	return data, nil
}

// parseNodeLabels reads the kubelet's --node-labels: key=value pairs joined by commas.
func parseNodeLabels(value string) (map[string]string, error) {
	labels := map[string]string{}
	if strings.TrimSpace(value) == "" {
		return labels, nil
	}
	for pair := range strings.SplitSeq(value, ",") {
		key, val, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", pair)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, fmt.Errorf("label key %q: %s", key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(val); len(errs) > 0 {
			return nil, fmt.Errorf("label %s value %q: %s", key, val, strings.Join(errs, "; "))
		}
		labels[key] = val
	}
	return labels, nil
}

// Encode is the Secret's "value".
func (d *BootstrapData) Encode() ([]byte, error) { return json.Marshal(d) }

// DecodeBootstrapData reads a data Secret's "value".
func DecodeBootstrapData(value []byte) (*BootstrapData, error) {
	data := &BootstrapData{}
	if err := json.Unmarshal(value, data); err != nil {
		return nil, fmt.Errorf("the bootstrap data is not a SimConfig's: %w", err)
	}
	data.Labels = maps.Clone(data.Labels)
	return data, nil
}
