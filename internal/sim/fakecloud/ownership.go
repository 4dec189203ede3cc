package fakecloud

import (
	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
)

// SetClusterName changes the cluster the cloud's caller is (Options.ClusterName), as an
// operator restarted with another --cluster-name: the instances tagged with the old name
// are no longer its own.
func (c *Cloud) SetClusterName(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clusterName = name
}

// SetTag sets a tag of an instance as if from outside Stratos, such as the console.
func (c *Cloud) SetTag(id, key, value string) error {
	return c.retag(id, func(tags map[string]string) { tags[key] = value })
}

// RemoveTag removes a tag of an instance as if from outside Stratos: removing
// stratos.sh/cluster takes the instance from the cluster.
func (c *Cloud) RemoveTag(id, key string) error {
	return c.retag(id, func(tags map[string]string) { delete(tags, key) })
}

// retag changes an instance's tags without counting a call or injecting faults.
func (c *Cloud) retag(id string, change func(map[string]string)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	inst, ok := c.instances[id]
	if !ok {
		return cloudprovider.NewError(cloudprovider.CodeNotFound, "Tag", id, "the cloud does not know the instance")
	}
	if inst.Tags == nil {
		inst.Tags = map[string]string{}
	}
	change(inst.Tags)
	c.notify()
	return nil
}

// owned reports whether the caller owns the instance: it carries the caller's cluster
// tag, or the cloud knows no cluster name. The caller holds the lock.
func (c *Cloud) owned(inst *instance) bool {
	return c.clusterName == "" || inst.Tags[v1beta1.TagCluster] == c.clusterName
}

// notOwnedError refuses an action on an instance that is not the caller's, as the EC2
// provider does before it would call EC2.
func (c *Cloud) notOwnedError(op string, inst *instance) error {
	return cloudprovider.NewError(cloudprovider.CodeNotOwned, op, inst.ID, "the instance is not tagged %s=%s",
		v1beta1.TagCluster, c.clusterName)
}
