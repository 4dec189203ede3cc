package cli

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratos-sh/stratos/internal/migrate"
)

// clusterTimeout bounds the whole read of a cluster.
const clusterTimeout = 2 * time.Minute

// karpenterResources are Karpenter's objects migrate converts, each by its versions in
// the order tried: the first a cluster serves is read.
var karpenterResources = [][]schema.GroupVersionResource{
	{{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}, {Group: "karpenter.sh", Version: "v1beta1", Resource: "nodepools"}},
	{{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}, {Group: "karpenter.k8s.aws", Version: "v1beta1", Resource: "ec2nodeclasses"}},
}

// workloadResources are the workloads whose pods the report looks at. Pods and
// ReplicaSets with an owner are left to their owner by migrate.
var workloadResources = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "batch", Version: "v1", Resource: "cronjobs"},
	{Group: "", Version: "v1", Resource: "pods"},
}

// readCluster reads the cluster of a kubeconfig: the explicit file, or $KUBECONFIG and
// then ~/.kube/config as kubectl finds them.
func readCluster(kubeconfig string) ([]migrate.Object, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	return ReadCluster(ctx, cfg)
}

// ReadCluster lists Karpenter's NodePools and EC2NodeClasses and the cluster's workloads.
func ReadCluster(ctx context.Context, cfg *rest.Config) ([]migrate.Object, error) {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var objects []migrate.Object
	for _, versions := range karpenterResources {
		for _, gvr := range versions {
			got, err := list(ctx, client, gvr)
			if apierrors.IsNotFound(err) {
				continue // this version is not served; try the next
			}
			if err != nil {
				return nil, err
			}
			objects = append(objects, got...)
			break
		}
	}
	for _, gvr := range workloadResources {
		got, err := list(ctx, client, gvr)
		if err != nil {
			return nil, err
		}
		objects = append(objects, got...)
	}
	return objects, nil
}

// list lists every object of a resource, a page at a time.
func list(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource) ([]migrate.Object, error) {
	var objects []migrate.Object
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := client.Resource(gvr).List(ctx, opts)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, err
			}
			return nil, fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		for _, item := range page.Items {
			objects = append(objects, migrate.Object{Source: "cluster", Raw: item.Object})
		}
		if page.GetContinue() == "" {
			return objects, nil
		}
		opts.Continue = page.GetContinue()
	}
}
