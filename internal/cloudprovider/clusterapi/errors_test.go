package clusterapi

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// The API server's refusals become cloud errors the lifecycle controller acts on: what
// only a change of the class or of rights mends is not retried hot; the rest is.
func TestClassify(t *testing.T) {
	machines := schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machines"}
	for _, tt := range []struct {
		name      string
		op        string
		err       error
		want      cloudprovider.ErrorCode
		retryable bool
	}{
		{"forbidden", cloudprovider.OpCreate, apierrors.NewForbidden(machines, "m", errors.New("no")), cloudprovider.CodeUnauthorized, false},
		{"invalid", cloudprovider.OpCreate, apierrors.NewInvalid(schema.GroupKind{Kind: "Machine"}, "m", field.ErrorList{field.Required(field.NewPath("spec"), "")}), cloudprovider.CodeInvalidParameter, false},
		{"namespace missing at launch", cloudprovider.OpCreate, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "capi"), cloudprovider.CodeInvalidParameter, false},
		{"not found", cloudprovider.OpStart, apierrors.NewNotFound(machines, "m"), cloudprovider.CodeNotFound, false},
		{"throttled", cloudprovider.OpGet, apierrors.NewTooManyRequests("slow down", 1), cloudprovider.CodeThrottled, true},
		{"server error", cloudprovider.OpGet, apierrors.NewInternalError(errors.New("etcd")), cloudprovider.CodeInternal, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.op, "capi/m", tt.err)
			if cloudprovider.CodeOf(got) != tt.want || cloudprovider.IsRetryable(got) != tt.retryable || !errors.Is(got, tt.err) {
				t.Errorf("%v: code %s retryable %t, want %s %t, wrapping the API error", got, cloudprovider.CodeOf(got), cloudprovider.IsRetryable(got), tt.want, tt.retryable)
			}
		})
	}
	already := cloudprovider.NewError(cloudprovider.CodeInvalidState, cloudprovider.OpCreate, "capi/m", "taken")
	if got := classify(cloudprovider.OpCreate, "capi/m", already); got != error(already) {
		t.Errorf("a cloud error was rewrapped: %v", got)
	}
	if classify(cloudprovider.OpGet, "", nil) != nil {
		t.Errorf("nil was not kept")
	}
}
