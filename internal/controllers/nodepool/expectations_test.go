package nodepool

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratos-sh/stratos/api/v1beta1"
)

func named(name string, deleting bool) v1beta1.NodeClaim {
	c := v1beta1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if deleting {
		c.DeletionTimestamp = &metav1.Time{Time: epoch}
	}
	return c
}

func TestExpectationsWaitForTheCacheToShowCreationsAndDeletions(t *testing.T) {
	var e expectations
	e.expect("web", "new", false, epoch)
	e.expect("web", "old", true, epoch)
	if e.met("web", []v1beta1.NodeClaim{named("old", false)}, epoch) {
		t.Fatal("met before the cache shows the new claim or the deletion")
	}
	if e.met("web", []v1beta1.NodeClaim{named("new", false), named("old", false)}, epoch) {
		t.Fatal("met before the cache shows the deletion")
	}
	if !e.met("web", []v1beta1.NodeClaim{named("new", false), named("old", true)}, epoch) {
		t.Fatal("a claim being deleted meets a deletion")
	}
	if !e.met("other", nil, epoch) {
		t.Fatal("a pool without expectations is met")
	}
}

func TestExpectationsExpire(t *testing.T) {
	var e expectations
	e.expect("web", "lost", false, epoch)
	if e.met("web", nil, epoch.Add(time.Second)) {
		t.Fatal("met too early")
	}
	if !e.met("web", nil, epoch.Add(2*expectationTTL)) {
		t.Fatal("an expectation must expire rather than block the pool forever")
	}
}

// A claim created and deleted before any pass listed it (a standby launch out of
// capacity) meets its expectation through its deletion, not after the TTL.
func TestAClaimDeletedBeforeItWasListedMeetsItsExpectation(t *testing.T) {
	var e expectations
	e.expect("web", "short-lived", false, epoch)
	if e.met("web", nil, epoch) {
		t.Fatal("met before the claim was seen")
	}
	e.gone("web", "short-lived")
	if !e.met("web", nil, epoch) {
		t.Fatal("not met after the claim's deletion was observed")
	}
}
