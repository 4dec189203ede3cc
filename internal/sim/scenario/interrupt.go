package scenario

import (
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

// The kinds of notice an interrupt step gives.
const (
	// KindSpot is an EC2 Spot Instance Interruption Warning; the instance is terminated
	// once the notice passes.
	KindSpot = "spot"
	// KindRebalance is an EC2 Instance Rebalance Recommendation; nothing else happens.
	KindRebalance = "rebalance"
	// KindScheduledChange is an AWS Health scheduled change: the instance retires
	// (terminates) once the notice passes.
	KindScheduledChange = "scheduledChange"
)

// InterruptKinds are the values of interrupt.kind.
var InterruptKinds = []string{KindSpot, KindRebalance, KindScheduledChange}

// DefaultNotice is the notice of a spot interruption, as EC2 gives it.
const DefaultNotice = 2 * time.Minute

// capacityTypes are the values of capacityType.
var capacityTypes = []string{v1beta1.CapacityTypeOnDemand, v1beta1.CapacityTypeSpot}

// Interrupt has the fake cloud give notice about running instances whose Nodes hold the
// scenario's workload pods: a batch of them at once, or one batch every interval. The
// step returns once the first batch is given; later ones come while the next steps run.
type Interrupt struct {
	// NodePool picks instances of one pool (their Nodes' stratos.sh/nodepool); empty:
	// any.
	NodePool string `json:"nodePool,omitempty"`
	// CapacityType picks instances of one capacity type; defaults to spot, the only
	// kind EC2 interrupts, for spot and rebalance notices, and to any for a scheduled
	// change.
	CapacityType string `json:"capacityType,omitempty"`
	// Count is how many instances a batch picks, or Share which share (0 to 1, rounded
	// up) of those that qualify; neither: all of them. A batch that finds fewer picks
	// what there is; the first batch fails the step when it finds none.
	Count *int     `json:"count,omitempty"`
	Share *float64 `json:"share,omitempty"`
	// Every is the interval between batches, in scenario time, for Batches batches.
	Every   *metav1.Duration `json:"every,omitempty"`
	Batches int              `json:"batches,omitempty"`
	// Notice is how long, in scenario time, the instance has before it is taken away;
	// defaults to 2m, EC2's notice of a spot interruption. Not for a rebalance
	// recommendation, which takes nothing away.
	Notice *metav1.Duration `json:"notice,omitempty"`
	// Kind is spot (the default), rebalance or scheduledChange.
	Kind string `json:"kind,omitempty"`
}

// KindOrDefault is the notice's kind, spot unless set.
func (in *Interrupt) KindOrDefault() string {
	if in.Kind == "" {
		return KindSpot
	}
	return in.Kind
}

// NoticeOrDefault is the notice period, DefaultNotice unless set.
func (in *Interrupt) NoticeOrDefault() time.Duration {
	if in.Notice == nil {
		return DefaultNotice
	}
	return in.Notice.Duration
}

// CapacityTypeOrDefault is the capacity type the step picks; empty for any.
func (in *Interrupt) CapacityTypeOrDefault() string {
	if in.CapacityType == "" && in.KindOrDefault() != KindScheduledChange {
		return v1beta1.CapacityTypeSpot
	}
	return in.CapacityType
}

// BatchesOrDefault is the number of batches, 1 unless set.
func (in *Interrupt) BatchesOrDefault() int {
	return max(in.Batches, 1)
}

func (in *Interrupt) validate() error {
	var errs []error
	if !slices.Contains(InterruptKinds, in.KindOrDefault()) {
		errs = append(errs, fmt.Errorf("kind %q is not one of %v", in.Kind, InterruptKinds))
	}
	if in.CapacityType != "" && !slices.Contains(capacityTypes, in.CapacityType) {
		errs = append(errs, fmt.Errorf("capacityType %q is not one of %v", in.CapacityType, capacityTypes))
	}
	if in.KindOrDefault() != KindScheduledChange && in.CapacityType == v1beta1.CapacityTypeOnDemand {
		errs = append(errs, fmt.Errorf("capacityType on-demand: EC2 gives %s notices of spot instances only; use kind scheduledChange", in.KindOrDefault()))
	}
	if in.NodePool != "" {
		if msgs := validation.IsDNS1123Subdomain(in.NodePool); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("nodePool %q: %v", in.NodePool, msgs))
		}
	}
	switch {
	case in.Count != nil && in.Share != nil:
		errs = append(errs, errors.New("count and share: set one, not both"))
	case in.Count != nil && *in.Count <= 0:
		errs = append(errs, fmt.Errorf("count must be positive, got %d", *in.Count))
	case in.Share != nil && (*in.Share <= 0 || *in.Share > 1):
		errs = append(errs, fmt.Errorf("share must be within (0, 1], got %v", *in.Share))
	}
	switch {
	case in.Every != nil && in.Every.Duration <= 0:
		errs = append(errs, fmt.Errorf("every must be positive, got %s", in.Every.Duration))
	case in.Every != nil && in.Batches < 2:
		errs = append(errs, errors.New("every needs batches: how many batches, at least 2"))
	case in.Every == nil && in.Batches != 0:
		errs = append(errs, errors.New("batches needs every: the interval between batches"))
	}
	if in.Notice != nil {
		switch {
		case in.KindOrDefault() == KindRebalance:
			errs = append(errs, errors.New("notice: a rebalance recommendation takes nothing away and has no notice"))
		case in.Notice.Duration <= 0:
			errs = append(errs, fmt.Errorf("notice must be positive, got %s", in.Notice.Duration))
		}
	}
	return errors.Join(errs...)
}

// Unhealthy makes the kubelets of running instances whose Nodes hold the scenario's
// workload pods fail, for node repair to notice.
type Unhealthy struct {
	// NodePool picks Nodes of one pool; empty: any.
	NodePool string `json:"nodePool,omitempty"`
	// Count is how many; defaults to 1.
	Count int `json:"count,omitempty"`
	// Condition is a node condition the Nodes report True from then on, as
	// node-problem-detector does, such as KernelDeadlock; empty: the kubelet reports Ready
	// False, as one whose container runtime is down.
	Condition string `json:"condition,omitempty"`
	// Silent makes the kubelets stop reporting and renewing their Leases instead:
	// kube-controller-manager marks the Nodes' Ready Unknown after its grace period,
	// which runs in real time whatever the time scale.
	Silent bool `json:"silent,omitempty"`
}

// CountOrDefault is the number of Nodes, 1 unless set.
func (u *Unhealthy) CountOrDefault() int { return max(u.Count, 1) }

func (u *Unhealthy) validate() error {
	var errs []error
	if u.Count < 0 {
		errs = append(errs, fmt.Errorf("count must be positive, got %d", u.Count))
	}
	if u.Condition == "Ready" {
		errs = append(errs, errors.New("condition Ready: leave condition empty for a kubelet that reports Ready False"))
	}
	if u.Condition != "" {
		if msgs := validation.IsQualifiedName(u.Condition); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("condition %q: %v", u.Condition, msgs))
		}
	}
	if u.Condition != "" && u.Silent {
		errs = append(errs, errors.New("condition and silent: a silent kubelet reports no condition; set one, not both"))
	}
	if u.NodePool != "" {
		if msgs := validation.IsDNS1123Subdomain(u.NodePool); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("nodePool %q: %v", u.NodePool, msgs))
		}
	}
	return errors.Join(errs...)
}
