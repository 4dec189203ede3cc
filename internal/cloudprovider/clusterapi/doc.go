// Package clusterapi is the Cluster API cloud provider: a NodeClaim's instance is a CAPI
// Machine of the cluster a ClusterAPINodeClass names, with a bootstrap config and an
// infrastructure machine made from the class's templates. Stratos creates and deletes
// those objects; CAPI's controllers, not Stratos, talk to the infrastructure. The
// instance ID is the Machine's namespace/name; the provider ID is the one the
// infrastructure provider reports on the Machine once it has provisioned it.
package clusterapi
