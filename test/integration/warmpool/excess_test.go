package warmpool_test

import (
	"context"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/test/stack"
)

// startsFirst is the controllers' client, which asks the first claim the controllers
// delete to run just before the deletion reaches the API server, as provisioning would
// for pods at that moment.
type startsFirst struct {
	c    client.Client
	once sync.Once

	mu sync.Mutex
	// started names the claim asked to run, and answer is the deletion's answer once
	// it came.
	started  string
	answered bool
	answer   error
}

func (s *startsFirst) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			_, isClaim := obj.(*v1beta1.NodeClaim)
			raced := false
			if isClaim {
				s.once.Do(func() {
					raced = true
					claim := &v1beta1.NodeClaim{}
					err := s.c.Get(ctx, client.ObjectKeyFromObject(obj), claim)
					if err == nil {
						base := claim.DeepCopy()
						claim.Spec.DesiredState = v1beta1.DesiredRunning
						err = s.c.Patch(ctx, claim, client.MergeFrom(base))
					}
					s.mu.Lock()
					s.started = obj.GetName()
					if err != nil {
						s.started = "failed to ask " + obj.GetName() + " to run: " + err.Error()
					}
					s.mu.Unlock()
				})
			}
			err := c.Delete(ctx, obj, opts...)
			if raced {
				s.mu.Lock()
				s.answered, s.answer = true, err
				s.mu.Unlock()
			}
			return err
		},
	})
}

// result is the claim asked to run and the deletion's answer, once it came.
func (s *startsFirst) result() (started string, answered bool, answer error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started, s.answered, s.answer
}

// An excess standby claim is deleted only as the pool read it: a start provisioning
// asked for between the read and the deletion wins, the API server refuses the
// deletion with a conflict, and the claim runs. On main before the change, the deletion
// carried no precondition: the claim asked to run was deleted, and the test failed
// there.
func TestAnExcessStandbyClaimAskedToRunMeanwhileIsNotRemoved(t *testing.T) {
	f := newFixture(t, nil)
	race := &startsFirst{c: f.Env.Client}
	f.Opts.Intercept = race.wrap
	f.RestartOperator(f.Opts)
	pool := f.Pool("excess", 2, nil)
	f.WaitForPhase("excess", 2, v1beta1.PhaseStandby)

	stack.Patch(f.Fixture, pool, func(p *v1beta1.NodePool) { p.Spec.Standby.Min = 1 })
	var started string
	var answer error
	f.Eventually("the pool tried to remove a standby claim", func() bool {
		var answered bool
		started, answered, answer = race.result()
		return answered
	})
	if claim := f.Claim(started); !claim.DeletionTimestamp.IsZero() {
		t.Fatalf("claim %s was asked to run and is deleted (at %s)", started, claim.DeletionTimestamp)
	}
	if !apierrors.IsConflict(answer) {
		t.Errorf("the deletion of %s answered %v, want a conflict", started, answer)
	}
	f.WaitForClaim(started, v1beta1.PhaseRunning)
	f.Eventually("one standby claim and the running one remain", func() bool {
		claims := f.Claims("excess")
		standby := 0
		for _, c := range claims {
			if c.Spec.DesiredState == v1beta1.DesiredStandby && c.Status.Phase == v1beta1.PhaseStandby {
				standby++
			}
		}
		return len(claims) == 2 && standby == 1
	})
	f.CheckInvariants()
}
