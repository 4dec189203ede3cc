package api_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestInvalidObjectsAreRejectedWithAClearMessage(t *testing.T) {
	if len(invalidCases) < 30 {
		t.Fatalf("the table holds %d invalid objects; keep at least 30", len(invalidCases))
	}
	for i, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := patched(t, tc.base, tc.patch, fmt.Sprintf("invalid-%d", i))
			err := env.Client.Create(testContext(t), obj)
			if err == nil {
				_ = env.Client.Delete(testContext(t), obj)
				t.Fatalf("the API server accepted %s", tc.patch)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want a validation error (422), got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the message does not say %q:\n%v", tc.want, err)
			}
		})
	}
}

func TestInvalidUpdatesAreRejectedWithAClearMessage(t *testing.T) {
	for i, tc := range invalidUpdates {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			obj := patched(t, tc.base, `{}`, fmt.Sprintf("update-%d", i))
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatalf("creating the valid object: %v", err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			patch := client.RawPatch(types.MergePatchType, []byte(tc.patch))
			var err error
			if tc.status {
				err = env.Client.Status().Patch(ctx, obj, patch)
			} else {
				err = env.Client.Patch(ctx, obj, patch)
			}
			if err == nil {
				t.Fatalf("the API server accepted %s", tc.patch)
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a validation error saying %q, got:\n%v", tc.want, err)
			}
		})
	}
}

func TestDesiredStateOfAClaimMayChange(t *testing.T) {
	ctx := testContext(t)
	obj := patched(t, baseClaim, `{}`, "desired-state-change")
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"desiredState":"Standby"}}`))
	if err := env.Client.Patch(ctx, obj, patch); err != nil {
		t.Fatalf("changing desiredState must be allowed: %v", err)
	}
}
