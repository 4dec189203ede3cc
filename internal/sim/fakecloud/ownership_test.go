package fakecloud

import (
	"context"
	"testing"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// An instance that lost its cluster tag, and every instance once the cloud serves
// another cluster name, is described as not owned, is refused by starts, stops and
// terminations, and is not listed; putting the tag back makes it the caller's again.
func TestInstancesWithoutTheCallersTagAreNotOwned(t *testing.T) {
	c, clk := newCloud(t, Options{ClusterName: "test"})
	kept := running(t, c, clk, request("kept"))
	untagged := running(t, c, clk, request("untagged"))
	if err := c.RemoveTag(untagged.ID, v1beta1.TagCluster); err != nil {
		t.Fatal(err)
	}
	wantOwned := func(what string, want map[string]bool) {
		t.Helper()
		ids := []string{kept.ID, untagged.ID}
		found, err := c.DescribeInstances(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := c.ListInstances(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		inList := map[string]bool{}
		for _, i := range listed {
			inList[i.ID] = true
		}
		for _, id := range ids {
			if found[id] == nil || found[id].NotOwned == want[id] || inList[id] != want[id] {
				t.Errorf("%s: instance %s described %+v, listed %v; want owned %v", what, id, found[id], inList[id], want[id])
			}
		}
	}
	wantOwned("tag removed", map[string]bool{kept.ID: true, untagged.ID: false})
	for _, call := range []func(context.Context, []string) (map[string]error, error){c.StartInstances, plainStop(c), c.TerminateInstances} {
		wantCode(t, act(t, call, untagged.ID), cloudprovider.CodeNotOwned)
	}
	wantState(t, c, untagged.ID, cloudprovider.StateRunning)

	if err := c.SetTag(untagged.ID, v1beta1.TagCluster, "test"); err != nil {
		t.Fatal(err)
	}
	wantOwned("tag back", map[string]bool{kept.ID: true, untagged.ID: true})

	c.SetClusterName("renamed")
	wantOwned("cluster renamed", map[string]bool{kept.ID: false, untagged.ID: false})
	wantCode(t, act(t, c.TerminateInstances, kept.ID), cloudprovider.CodeNotOwned)
	wantState(t, c, kept.ID, cloudprovider.StateRunning)
	wantCode(t, c.RemoveTag("i-00000000000000000", v1beta1.TagCluster), cloudprovider.CodeNotFound)
}
