package operator

import (
	"fmt"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/fakecloud"
	"github.com/stratos-sh/stratos/internal/sim/kubelet"
)

// newFakeCloud runs the simulated cloud in the operator's process, with its kubelet
// simulator registering Nodes on the same API server. Its instances live as long as the
// process does. With --fake-cloud-endpoint the cloud lives in another process, which
// also plays its kubelets, so that its instances survive the operator.
func newFakeCloud(opts *Options, mgr manager.Manager) (cloudprovider.API, error) {
	if opts.FakeCloudEndpoint != "" {
		remote, err := fakecloud.NewRemote(opts.FakeCloudEndpoint, nil)
		if err != nil {
			return nil, err
		}
		return remote, nil
	}
	cloud := fakecloud.New(fakecloud.Options{Clock: clock.RealClock{}, TimeScale: opts.FakeTimeScale, Seed: opts.FakeSeed, ClusterName: opts.ClusterName})
	// The kubelets are not the operator: they read the API server directly, not
	// through the operator's cache.
	kubeletClient, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, fmt.Errorf("creating the fake kubelets' client: %w", err)
	}
	if err := kubelet.NewKubelet(cloud, kubeletClient, kubelet.KubeletOptions{}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return cloud, nil
}
