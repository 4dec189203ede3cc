// Package recovery keeps Stratos's singleton loops (provisioning, disruption) alive when
// one of their passes panics: a bad input from a cloud provider or a bug in the
// simulation costs one pass, not the operator. The panic is logged with the size of the
// input the pass worked on and counted, so that it is seen and can be reproduced.
package recovery

import (
	"context"
	"fmt"
	"runtime/debug"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/stratos-sh/stratos/internal/metrics"
)

// Size describes the input of a pass as logging key-value pairs, such as "pods", 12.
// A pass fills it in as it learns the sizes, so that a panic reports what it had.
type Size []any

// Recover, deferred by a pass, turns a panic of the pass into err: it logs the panic
// with the stack and the pass's input size, and counts it in
// stratos_controller_panics_total{controller=loop}.
func Recover(ctx context.Context, loop string, size *Size, err *error) {
	r := recover()
	if r == nil {
		return
	}
	metrics.ControllerPanics.WithLabelValues(loop).Inc()
	*err = fmt.Errorf("%s pass panicked: %v", loop, r)
	kv := append(append([]any{}, *size...), "stack", string(debug.Stack()))
	log.FromContext(ctx).Error(*err, "Recovered from a panic; the next pass runs as usual", kv...)
}
