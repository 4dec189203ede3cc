package clusterapi

// The permissions of the Cluster API provider and the ClusterAPINodeClass controller: a
// ClusterRole of its own, stratos-clusterapi (config/rbac/clusterapi, `make generate`),
// which the chart binds only with settings.cloudProvider clusterapi. The templates, the
// bootstrap configs and the infrastructure machines are of the groups of the providers
// the cluster runs, which no marker can name: the chart grants them for the groups its
// values clusterAPI.bootstrapGroups and clusterAPI.infrastructureGroups list.
//
// Machines: made for each claim, read and watched, patched, deleted at termination.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;create;delete;patch
// The bootstrap config and infrastructure machine Stratos makes for a Machine are owned
// by it with blockOwnerDeletion, which OwnerReferencesPermissionEnforcement allows only
// to who may update the Machine's finalizers.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/finalizers,verbs=update
// Clusters: the class's Cluster is checked to exist, and read for its namespace's Machines.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// CRDs: the contract label of a template's or machine's kind names the version to read
// it at (internal/capicontract), one CRD by name.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get
