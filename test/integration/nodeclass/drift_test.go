package nodeclass_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/api/v1beta1"
	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclaim"
	"github.com/stratos-sh/stratos/internal/controllers/nodeclass"
	"github.com/stratos-sh/stratos/internal/controllers/nodepool"
	"github.com/stratos-sh/stratos/internal/controllers/provisioning"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/test/stack"
)

// imageCloud is the fake cloud, whose kubelets register Nodes, launching for
// EC2NodeClasses: each instance runs the image its class resolved to for the
// instance's architecture and holds its class's instance profile, as on EC2, and the
// fake's whole catalogue is offered.
type imageCloud struct {
	*fakecloud.Cloud
	mu       sync.Mutex
	images   map[string]string // by instance ID
	profiles map[string]string // by instance ID
}

func (c *imageCloud) Create(ctx context.Context, req *cloudprovider.CreateRequest) (*cloudprovider.Instance, error) {
	class, ok := req.NodeClass.(*v1beta1.EC2NodeClass)
	if !ok {
		return nil, fmt.Errorf("node class %T is not an EC2NodeClass", req.NodeClass)
	}
	onFake := *req
	onFake.NodeClass = nil
	instance, err := c.Cloud.Create(ctx, &onFake)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, launched := c.images[instance.ID]; !launched {
		for _, ami := range class.Status.AMIs {
			if ami.Architecture == instance.Architecture {
				c.images[instance.ID] = ami.ID
			}
		}
		if c.profiles == nil {
			c.profiles = map[string]string{}
		}
		c.profiles[instance.ID] = class.Status.InstanceProfile
	}
	instance.ImageID = c.images[instance.ID]
	instance.InstanceProfile = c.profiles[instance.ID]
	return instance, nil
}

func (c *imageCloud) DescribeInstances(ctx context.Context, ids []string) (map[string]*cloudprovider.Instance, error) {
	instances, err := c.Cloud.DescribeInstances(ctx, ids)
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, instance := range instances {
		instance.ImageID = c.images[id]
		instance.InstanceProfile = c.profiles[id]
	}
	return instances, err
}

func (c *imageCloud) InstanceTypes(ctx context.Context, _ client.Object) ([]*cloudprovider.InstanceType, error) {
	return c.Cloud.InstanceTypes(ctx, nil)
}

// claimImages are the images the pool's claims were launched from, by claim, "" for a
// claim not launched.
func (f *fixture) claimImages(pool string) map[string]string {
	f.t.Helper()
	claims := &v1beta1.NodeClaimList{}
	if err := f.env.Client.List(f.ctx, claims); err != nil {
		f.t.Fatal(err)
	}
	images := map[string]string{}
	for _, c := range claims.Items {
		if c.Spec.NodePool == pool && c.DeletionTimestamp.IsZero() {
			images[c.Name] = c.Status.ImageID
		}
	}
	return images
}

// A pool on al2023@latest waits while its class has not resolved (no standby node, no
// node for a waiting pod), then its standby
// node launches from the image the class resolved to and records it; when a new image
// is published behind the alias, the node is marked Drifted for ImageChanged and a
// standby node of the new image takes its place.
func TestNodesOnAnImageTheClassNoLongerResolvesDrift(t *testing.T) {
	f := newFixture(t, nodeclass.Options{Refresh: time.Second, RetryFailed: 500 * time.Millisecond}, nil)
	f.startOperatorOnFakeCloud()
	// A class whose subnets match nothing yet: the pool makes no node.
	web := class("web")
	web.Spec.SubnetSelectorTerms = []v1beta1.SubnetSelectorTerm{{Tags: map[string]string{"stratos.sh/discovery": "web"}}}
	f.create(web)
	f.create(standbyPool("web"))
	f.eventually("the pool says its class is not ready", func() bool {
		pool := &v1beta1.NodePool{}
		if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: "web"}, pool); err != nil {
			t.Fatal(err)
		}
		degraded := meta.FindStatusCondition(pool.Status.Conditions, v1beta1.ConditionDegraded)
		return degraded != nil && degraded.Reason == nodepool.ReasonNodeClassNotReady && strings.Contains(degraded.Message, "SubnetsNotFound")
	})
	// A pod that waits gets no node of the pool either: provisioning passes it over.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "waiting", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	f.create(pod)
	base := pod.DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.Now()}}
	if err := f.env.Client.Status().Patch(f.ctx, pod, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	f.eventually("provisioning says no pool can make a node for the pod", func() bool { return len(f.events("waiting", provisioning.ReasonNoPoolFits)) > 0 })
	if images := f.claimImages("web"); len(images) != 0 {
		t.Fatalf("claims %v were made while the class was not ready", images)
	}
	if err := f.env.Client.Delete(f.ctx, pod); err != nil {
		t.Fatal(err)
	}

	// The class resolves: a standby node launches from the class's amd64 image.
	patch(f, web, func(c *v1beta1.EC2NodeClass) { c.Spec.SubnetSelectorTerms[0].Tags["stratos.sh/discovery"] = "test" })
	var old string
	f.eventually("a standby node of the first image stands by", func() bool {
		for name, image := range f.claimImages("web") {
			if image == imageV1AMD64.ID && f.claim(name).Status.Phase == v1beta1.PhaseStandby {
				old = name
				return true
			}
		}
		return false
	})

	f.putParameter(alAMD64, imageV2AMD64.ID)
	f.eventually("the node on the old image is marked Drifted for ImageChanged", func() bool {
		drifted := meta.FindStatusCondition(f.claim(old).Status.Conditions, v1beta1.ConditionDrifted)
		return drifted != nil && drifted.Status == metav1.ConditionTrue && drifted.Reason == nodepool.ReasonImageChanged &&
			strings.Contains(drifted.Message, imageV2AMD64.ID)
	})
	f.eventually("a standby node of the new image replaces it", func() bool {
		images := f.claimImages("web")
		_, stays := images[old]
		for name, image := range images {
			if image == imageV2AMD64.ID && f.claim(name).Status.Phase == v1beta1.PhaseStandby {
				return !stays
			}
		}
		return false
	})
}

// claim reads a NodeClaim; a claim gone reads as one of no phase.
func (f *fixture) claim(name string) *v1beta1.NodeClaim {
	f.t.Helper()
	claim := &v1beta1.NodeClaim{}
	if err := f.env.Client.Get(f.ctx, client.ObjectKey{Name: name}, claim); client.IgnoreNotFound(err) != nil {
		f.t.Fatal(err)
	}
	return claim
}

// patch changes an object with change and writes it as a merge patch.
func patch[T client.Object](f *fixture, obj T, change func(T)) {
	f.t.Helper()
	if err := f.env.Client.Get(f.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		f.t.Fatal(err)
	}
	base := obj.DeepCopyObject().(T)
	change(obj)
	if err := f.env.Client.Patch(f.ctx, obj, client.MergeFrom(base)); err != nil {
		f.t.Fatalf("patching %s: %v", obj.GetName(), err)
	}
}

// startOperatorOnFakeCloud runs the operator on a fake cloud that records the image of
// each launch, with timeouts short enough for a test.
func (f *fixture) startOperatorOnFakeCloud() *imageCloud {
	cloud := &imageCloud{Cloud: stack.StartCloud(f.t, f.env, fakecloud.Options{TimeScale: stack.TimeScale, Seed: 1}), images: map[string]string{}}
	stack.StartOperator(f.t, f.env, cloud, stack.OperatorOptions{NodeClaim: nodeclaim.Options{
		ClusterName: clusterName, LaunchTimeout: 30 * time.Second, RegistrationTimeout: 30 * time.Second,
		PollInterval: 100 * time.Millisecond, ResyncInterval: time.Second,
	}})
	return cloud
}

// standbyPool is a pool of the EC2NodeClass of its name that keeps one amd64 node on
// standby.
func standbyPool(name string) *v1beta1.NodePool {
	return &v1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.NodePoolSpec{
			Template: v1beta1.NodeClaimTemplate{
				Spec: v1beta1.NodeClaimTemplateSpec{
					NodeClassRef: v1beta1.NodeClassReference{Kind: "EC2NodeClass", Name: name},
					Requirements: []v1beta1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}},
				},
			},
			Standby: v1beta1.Standby{Min: 1},
		},
	}
}
