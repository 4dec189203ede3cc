package disruption

import (
	"time"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/budgets"
)

// budget is what a pool's budgets leave in one pass.
type budget struct {
	budgets           []v1beta1.Budget
	total, disrupting int
	now               time.Time
	// err is set when a budget could not be read; nothing is disrupted then.
	err error
}

// left is how many more of the pool's nodes may be disrupted now for reason.
func (b *budget) left(reason v1beta1.DisruptionReason) int {
	n, err := budgets.Allowed(b.budgets, reason, b.total, b.now)
	if err != nil {
		b.err = err
		return 0
	}
	return n - b.disrupting
}

// take counts one more node being disrupted.
func (b *budget) take() { b.disrupting++ }
