package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/ptr"
)

// sweepTimeout bounds a sweep: deletions without a finalizer or a grace period take
// milliseconds each, a few hundred objects a few seconds on a loaded machine, so running
// out means something keeps recreating objects.
const sweepTimeout = 3 * time.Minute

// baseline is what a freshly started API server holds, and the resources to look in.
type baseline struct {
	resources []schema.GroupVersionResource
	// collections are the resources that can be deleted a namespace at a time.
	collections sets.Set[schema.GroupVersionResource]
	objects     sets.Set[string]
	meta        metadata.Interface
	core        kubernetes.Interface
}

// ignoredGroups are the API server's own configuration, which it keeps writing by
// itself and tests of the operator do not touch.
var ignoredGroups = []string{"apiextensions.k8s.io", "apiregistration.k8s.io", "flowcontrol.apiserver.k8s.io"}

func takeBaseline(env *Env) (*baseline, error) {
	disc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		return nil, err
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the API server's resources: %w", err)
	}
	b := &baseline{meta: metadata.NewForConfigOrDie(env.Config), core: kubernetes.NewForConfigOrDie(env.Config),
		collections: sets.New[schema.GroupVersionResource](), objects: sets.New[string]()}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil || slices.Contains(ignoredGroups, gv.Group) {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			b.resources = append(b.resources, gv.WithResource(r.Name))
			if slices.Contains(r.Verbs, "deletecollection") {
				b.collections.Insert(gv.WithResource(r.Name))
			}
		}
	}
	objects, err := b.list(context.Background())
	if err != nil {
		return nil, err
	}
	for key := range objects {
		b.objects.Insert(key)
	}
	return b, nil
}

// object is one object the API server holds, as the sweep needs it.
type object struct {
	gvr        schema.GroupVersionResource
	namespace  string
	name       string
	finalizers bool
	deleting   bool
}

func (o object) key() string {
	return o.gvr.GroupResource().String() + " " + o.namespace + "/" + o.name
}

// group is the object's resource and namespace: what one delete of a collection takes.
func (o object) group() string {
	return o.gvr.GroupResource().String() + " " + o.namespace
}

func (b *baseline) list(ctx context.Context) (map[string]object, error) {
	out := map[string]object{}
	for _, gvr := range b.resources {
		list, err := b.meta.Resource(gvr).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr, err)
		}
		for _, item := range list.Items {
			o := object{gvr: gvr, namespace: item.Namespace, name: item.Name,
				finalizers: len(item.Finalizers) > 0, deleting: item.DeletionTimestamp != nil}
			out[o.key()] = o
		}
	}
	return out, nil
}

// system reports whether an object is the API server's own: it may create some of them
// after the baseline was taken (its identity Lease, the kubernetes Service's endpoints).
func system(o object) bool {
	return o.namespace == metav1.NamespaceSystem ||
		strings.HasPrefix(o.name, "system:") || strings.HasPrefix(o.name, "system-") ||
		(o.namespace == metav1.NamespaceDefault && strings.HasPrefix(o.name, "kubernetes"))
}

// extras lists what the API server holds beyond its baseline.
func (b *baseline) extras() ([]string, error) {
	objects, err := b.list(context.Background())
	if err != nil {
		return nil, err
	}
	var out []string
	for key, o := range objects {
		if !b.objects.Has(key) && !system(o) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out, nil
}

// sweep deletes everything a test left beyond the baseline: finalizers stripped (the
// controllers that would remove them have stopped), no grace period, namespaces
// finalized as the namespace controller would once their contents are gone.
func (b *baseline) sweep() error {
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	var left []string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		objects, err := b.list(ctx)
		if err != nil {
			lastErr = err // a loaded API server's timeout: the next round tries again
			return false, nil
		}
		left = left[:0]
		// A group that holds the API server's own objects is not deleted as a collection.
		mixed := sets.New[string]()
		for key, o := range objects {
			if b.objects.Has(key) || system(o) {
				mixed.Insert(o.group())
			}
		}
		collections := map[string]object{}
		for key, o := range objects {
			if b.objects.Has(key) || system(o) {
				continue
			}
			left = append(left, key)
			if o.finalizers {
				if err := b.stripFinalizers(ctx, o); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					return false, fmt.Errorf("stripping the finalizers of %s: %w", key, err)
				}
			}
			// What the baseline has none of goes a collection at a time: a test may leave
			// hundreds of Events, Leases and Nodes.
			if b.collections.Has(o.gvr) && !mixed.Has(o.group()) && o.gvr.Resource != "namespaces" {
				collections[o.group()] = o
				continue
			}
			if err := b.remove(ctx, o); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return false, fmt.Errorf("deleting %s: %w", key, err)
			}
		}
		for group, o := range collections {
			// A collection of hundreds can outlast the API server's request timeout on a
			// loaded machine, which deletes on regardless: the next round looks again.
			err := b.meta.Resource(o.gvr).Namespace(o.namespace).DeleteCollection(ctx, deleteNow(), metav1.ListOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				lastErr = fmt.Errorf("deleting the collection %s: %w", group, err)
			}
		}
		return len(left) == 0, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		slices.Sort(left)
		if len(left) > 20 {
			left = append(left[:20], fmt.Sprintf("and %d more", len(left)-20))
		}
		return fmt.Errorf("after %s these remain: %v (last error: %v)", sweepTimeout, left, lastErr)
	}
	return err
}

func (b *baseline) stripFinalizers(ctx context.Context, o object) error {
	_, err := b.meta.Resource(o.gvr).Namespace(o.namespace).Patch(ctx, o.name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	return err
}

func (b *baseline) remove(ctx context.Context, o object) error {
	if o.gvr.Group == "" && o.gvr.Resource == "namespaces" && o.deleting {
		// The namespace controller's last step: its contents are gone (the sweep deletes
		// them in the same pass), so its spec.finalizers go and the namespace with them.
		ns, err := b.core.CoreV1().Namespaces().Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ns.Spec.Finalizers = nil
		if _, err := b.core.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return b.meta.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, o.name, deleteNow())
}

// deleteNow deletes without a grace period: no kubelet is left to confirm a pod's end.
func deleteNow() metav1.DeleteOptions {
	return metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
}
