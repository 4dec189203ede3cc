package ec2machines

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// KubeletSettings are the kubelet configuration fields a node's user data sets, as the
// kubelet reads them; unset fields keep the image's defaults.
type KubeletSettings struct {
	MaxPods        *int64
	KubeReserved   corev1.ResourceList
	SystemReserved corev1.ResourceList
	// EvictionHard and EvictionSoft are thresholds by signal (memory.available, ...).
	EvictionHard map[string]Threshold
	EvictionSoft map[string]Threshold
	// EvictionSoftGracePeriod is by signal.
	EvictionSoftGracePeriod     map[string]time.Duration
	ImageGCHighThresholdPercent *int64
	ImageGCLowThresholdPercent  *int64
}

// Threshold is an eviction threshold: a quantity, or a percentage of the capacity.
// Neither is a threshold the kubelet ignores (0% and 100%), which keeps nothing free.
type Threshold struct {
	Quantity *resource.Quantity
	// Percent is a decimal number of hundredths, such as 5 or 7.5.
	Percent *big.Rat
}

// Of is what the threshold keeps free of a resource of the given capacity: a
// percentage is rounded down to a whole unit, in exact decimal arithmetic (the kubelet's
// float32 differs by a few bytes at most).
func (t Threshold) Of(capacity resource.Quantity) resource.Quantity {
	switch {
	case t.Quantity != nil:
		return t.Quantity.DeepCopy()
	case t.Percent != nil:
		share := new(big.Rat).Mul(t.Percent, big.NewRat(capacity.Value(), 100))
		return *resource.NewQuantity(new(big.Int).Quo(share.Num(), share.Denom()).Int64(), capacity.Format)
	default:
		return *resource.NewQuantity(0, capacity.Format)
	}
}

// reservable and signals are what the kubelet takes in its reservations and eviction
// thresholds.
var (
	reservable = []string{"cpu", "memory", "ephemeral-storage", "pid"}
	signals    = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}
)

// rawKubeletSettings are the settings as the user data writes them, before the checks
// the kubelet makes at startup.
type rawKubeletSettings struct {
	MaxPods                                                 *int64
	KubeReserved, SystemReserved                            map[string]string
	EvictionHard, EvictionSoft, EvictionSoftGracePeriod     map[string]string
	ImageGCHighThresholdPercent, ImageGCLowThresholdPercent *int64
}

// check reads the settings as the kubelet does, refusing what would stop it.
func (r rawKubeletSettings) check() (KubeletSettings, error) {
	var s KubeletSettings
	var err error
	if r.MaxPods != nil {
		if *r.MaxPods < 1 {
			return s, fmt.Errorf("maxPods %d: want at least 1", *r.MaxPods)
		}
		s.MaxPods = r.MaxPods
	}
	if s.KubeReserved, err = reservation(r.KubeReserved); err != nil {
		return s, fmt.Errorf("kubeReserved: %w", err)
	}
	if s.SystemReserved, err = reservation(r.SystemReserved); err != nil {
		return s, fmt.Errorf("systemReserved: %w", err)
	}
	if s.EvictionHard, err = evictionThresholds(r.EvictionHard); err != nil {
		return s, fmt.Errorf("evictionHard: %w", err)
	}
	if s.EvictionSoft, err = evictionThresholds(r.EvictionSoft); err != nil {
		return s, fmt.Errorf("evictionSoft: %w", err)
	}
	for _, signal := range slices.Sorted(maps.Keys(r.EvictionSoftGracePeriod)) {
		d, err := time.ParseDuration(r.EvictionSoftGracePeriod[signal])
		if err != nil || !slices.Contains(signals, signal) {
			return s, fmt.Errorf("evictionSoftGracePeriod: %s = %q: want a known signal and a duration", signal, r.EvictionSoftGracePeriod[signal])
		}
		if s.EvictionSoftGracePeriod == nil {
			s.EvictionSoftGracePeriod = map[string]time.Duration{}
		}
		s.EvictionSoftGracePeriod[signal] = d
	}
	// The kubelet refuses a soft threshold without a grace period.
	for signal := range s.EvictionSoft {
		if _, ok := s.EvictionSoftGracePeriod[signal]; !ok {
			return s, fmt.Errorf("evictionSoft %s has no evictionSoftGracePeriod", signal)
		}
	}
	for _, p := range []*int64{r.ImageGCHighThresholdPercent, r.ImageGCLowThresholdPercent} {
		if p != nil && (*p < 0 || *p > 100) {
			return s, fmt.Errorf("image GC threshold %d%%: want 0 to 100", *p)
		}
	}
	if high, low := r.ImageGCHighThresholdPercent, r.ImageGCLowThresholdPercent; high != nil && low != nil && *low >= *high {
		return s, fmt.Errorf("imageGCLowThresholdPercent %d is not below imageGCHighThresholdPercent %d", *low, *high)
	}
	s.ImageGCHighThresholdPercent, s.ImageGCLowThresholdPercent = r.ImageGCHighThresholdPercent, r.ImageGCLowThresholdPercent
	return s, nil
}

// reservation reads kubeReserved or systemReserved: resource → quantity.
func reservation(values map[string]string) (corev1.ResourceList, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		q, err := resource.ParseQuantity(values[name])
		if err != nil || q.Sign() < 0 || !slices.Contains(reservable, name) {
			return nil, fmt.Errorf("%s = %q: want one of %v and a non-negative quantity", name, values[name], reservable)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// evictionThresholds reads thresholds by signal: quantities or percentages.
func evictionThresholds(values map[string]string) (map[string]Threshold, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]Threshold{}
	for _, signal := range slices.Sorted(maps.Keys(values)) {
		value := values[signal]
		if !slices.Contains(signals, signal) {
			return nil, fmt.Errorf("%s: not an eviction signal (%v)", signal, signals)
		}
		if value == "0%" || value == "100%" {
			// The kubelet ignores these: the signal has no threshold.
			out[signal] = Threshold{}
			continue
		}
		if percent, ok := strings.CutSuffix(value, "%"); ok {
			p, ok := new(big.Rat).SetString(percent)
			if !ok || p.Sign() < 0 || p.Cmp(big.NewRat(100, 1)) > 0 {
				return nil, fmt.Errorf("%s = %q: want a percentage from 0 to 100", signal, value)
			}
			out[signal] = Threshold{Percent: p}
			continue
		}
		q, err := resource.ParseQuantity(value)
		if err != nil || q.Sign() <= 0 {
			return nil, fmt.Errorf("%s = %q: want a positive quantity or a percentage", signal, value)
		}
		out[signal] = Threshold{Quantity: &q}
	}
	return out, nil
}
