// Package clusterapi is the Cluster API cloud provider: a NodeClaim's instance is a CAPI
// Machine of the cluster a ClusterAPINodeClass names, with a bootstrap config and an
// infrastructure machine made from the class's templates. Stratos creates and deletes
// those objects; CAPI's controllers, not Stratos, talk to the infrastructure. The
// instance ID is the Machine's namespace/name; the provider ID is the one the
// infrastructure provider reports on the Machine once it has provisioned it.
//
// What the operator gives it: a client whose scheme has CAPI's types (AddToScheme),
// reading Machines through the manager's cache; an uncached reader (the manager's
// GetAPIReader) for templates, CRDs and Clusters; and the rights to get, list, watch,
// create and delete Machines, get Clusters and CustomResourceDefinitions, get templates,
// create and get bootstrap configs and infrastructure machines, and patch those Stratos
// powers (SimMachines). The node class controller checks a class with Resolve and
// learns from it whether the class's pools may keep warm pools.
package clusterapi
