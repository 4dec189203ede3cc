package schedulinginput

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/internal/state"
	"github.com/stratos-sh/stratos/internal/volumes"
)

// AnnotationDefaultStorageClass marks the cluster's default StorageClass, which a claim
// that names none gets (the DefaultStorageClass admission plugin's annotation).
const AnnotationDefaultStorageClass = "storageclass.kubernetes.io/is-default-class"

// storage reads the storage objects pods' volumes name through the manager's cache,
// whose informers the cluster state watches too (state.Cluster.Watch).
type storage struct {
	ctx    context.Context
	reader client.Reader
}

func (s storage) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return get(s, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.PersistentVolumeClaim{})
}

func (s storage) Volume(name string) (*corev1.PersistentVolume, error) {
	return get(s, client.ObjectKey{Name: name}, &corev1.PersistentVolume{})
}

func (s storage) Class(name string) (*storagev1.StorageClass, error) {
	return get(s, client.ObjectKey{Name: name}, &storagev1.StorageClass{})
}

// DefaultClass is the newest class marked default, as the admission plugin picks when
// several are.
func (s storage) DefaultClass() (*storagev1.StorageClass, error) {
	classes := &storagev1.StorageClassList{}
	if err := s.reader.List(s.ctx, classes); err != nil {
		return nil, err
	}
	var best *storagev1.StorageClass
	for i := range classes.Items {
		c := &classes.Items[i]
		if c.Annotations[AnnotationDefaultStorageClass] != "true" {
			continue
		}
		if best == nil || c.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(c.CreationTimestamp.Equal(&best.CreationTimestamp) && c.Name < best.Name) {
			best = c
		}
	}
	return best, nil
}

// get reads one object; a missing one is nil.
func get[T client.Object](s storage, key client.ObjectKey, obj T) (T, error) {
	var none T
	if err := s.reader.Get(s.ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return none, nil
		}
		return none, err
	}
	return obj, nil
}

// volumeNeeds works out what the volumes of the snapshot's pods and of pods ask of their
// nodes, for the pods that have claims: those waiting, those on nodes and claims (their
// volumes count against attach limits), and those on nodes going away.
func (b Builder) volumeNeeds(ctx context.Context, snap state.Snapshot, pods []*corev1.Pod) (map[types.UID]volumes.Needs, error) {
	lister := storage{ctx: ctx, reader: b.Client}
	needs := map[types.UID]volumes.Needs{}
	add := func(list []*corev1.Pod) error {
		for _, pod := range list {
			if _, done := needs[pod.UID]; done || !volumes.HasClaims(pod) {
				continue
			}
			n, err := volumes.For(pod, lister)
			if err != nil {
				return err
			}
			needs[pod.UID] = n
		}
		return nil
	}
	lists := [][]*corev1.Pod{pods, snap.Pending, snap.Leaving}
	for _, ns := range snap.Nodes {
		lists = append(lists, ns.Pods)
	}
	for _, cs := range snap.Claims {
		lists = append(lists, cs.Pods, cs.Nominated)
	}
	for _, list := range lists {
		if err := add(list); err != nil {
			return nil, err
		}
	}
	return needs, nil
}

// attachLimits returns the attach limits the cluster's CSINodes publish, by node name.
func (b Builder) attachLimits(ctx context.Context) (map[string]map[string]int64, error) {
	csiNodes := &storagev1.CSINodeList{}
	if err := b.Client.List(ctx, csiNodes); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]int64, len(csiNodes.Items))
	for i := range csiNodes.Items {
		if limits := volumes.Limits(&csiNodes.Items[i]); limits != nil {
			out[csiNodes.Items[i].Name] = limits
		}
	}
	return out, nil
}

// claimAttachLimits is what a claim's node may attach: its CSINode's limits once
// published, else its instance type's estimate.
func claimAttachLimits(cs state.ClaimState, published map[string]map[string]int64, types catalog) map[string]int64 {
	if cs.Node != nil {
		if limits, ok := published[cs.Node.Name]; ok {
			return limits
		}
	}
	if it := types[cs.Claim.Status.InstanceType]; it != nil {
		return it.AttachLimits
	}
	return nil
}
