package clusterapisim_test

import (
	"path"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/stratos-sh/stratos/internal/cloudprovider"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simapi/v1alpha1"
	"github.com/stratos-sh/stratos/internal/sim/clusterapi/simprovider"
)

const clusterName = "sim"

// machineSet is a hand-made CAPI Machine with the SimConfig and SimMachine it refers
// to, owned by it as CAPI's Machine controller would own them.
type machineSet struct {
	machine *clusterv1.Machine
	config  *v1alpha1.SimConfig
	infra   *v1alpha1.SimMachine
}

// newMachine makes the objects of one machine: a Machine (without bootstrap data yet),
// a SimConfig with the given node registration, and a SimMachine with the given labels.
func newMachine(e *simEnv, namespace, name string, reg v1alpha1.NodeRegistrationOptions, labels map[string]string) *machineSet {
	e.t.Helper()
	if err := e.c.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); client.IgnoreAlreadyExists(err) != nil {
		e.t.Fatal(err)
	}
	clusterLabel := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: clusterLabel},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimConfig, Name: name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: v1alpha1.Group, Kind: v1alpha1.KindSimMachine, Name: name},
		},
	}
	e.create(machine)
	owner := []metav1.OwnerReference{{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	config := &v1alpha1.SimConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: clusterLabel, OwnerReferences: owner},
		Spec:       v1alpha1.SimConfigSpec{JoinConfiguration: v1alpha1.JoinConfiguration{NodeRegistration: reg}},
	}
	e.create(config)
	infraLabels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	for k, v := range labels {
		infraLabels[k] = v
	}
	infra := &v1alpha1.SimMachine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: infraLabels, OwnerReferences: owner}}
	e.create(infra)
	return &machineSet{machine: machine, config: config, infra: infra}
}

// giveBootstrapData does what CAPI's Machine controller does once the SimConfig reports
// its data Secret: it copies the name to the Machine.
func (m *machineSet) giveBootstrapData(e *simEnv) {
	e.t.Helper()
	e.eventually("the SimConfig reports its data secret", func() bool {
		return e.get(m.config) && m.config.Status.DataSecretName != "" && ptr.Deref(m.config.Status.Initialization.DataSecretCreated, false)
	})
	patch(e, m.machine, func(machine *clusterv1.Machine) {
		machine.Spec.Bootstrap.DataSecretName = ptr.To(m.config.Status.DataSecretName)
	})
}

// node is the Node whose provider ID is the SimMachine's, nil while there is none.
func (e *simEnv) node(providerID string) *corev1.Node {
	e.t.Helper()
	nodes := &corev1.NodeList{}
	if err := e.c.List(e.ctx, nodes); err != nil {
		e.t.Fatal(err)
	}
	for n := range nodes.Items {
		if providerID != "" && nodes.Items[n].Spec.ProviderID == providerID {
			return &nodes.Items[n]
		}
	}
	return nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// instance is what the cloud knows of an instance, by ID.
func (e *simEnv) instance(id string) (cloudprovider.Instance, bool) {
	for _, i := range e.cloud.Instances() {
		if i.ID == id {
			return i, true
		}
	}
	return cloudprovider.Instance{}, false
}

func readyReason(m *v1alpha1.SimMachine) string {
	if c := meta.FindStatusCondition(m.Status.Conditions, "Ready"); c != nil {
		return c.Reason
	}
	return ""
}

var batchTaint = corev1.Taint{Key: "example.com/batch", Value: "yes", Effect: corev1.TaintEffectNoSchedule}

// A SimMachine waits for its Machine's bootstrap data, then launches the instance its
// labels ask for; the Node registers with the SimMachine's provider ID and the labels,
// taints and max pods of the SimConfig's bootstrap data.
func TestSimMachineLaunchesAndItsNodeRegisters(t *testing.T) {
	e := start(t)
	m := newMachine(e, "launch", "worker-1",
		v1alpha1.NodeRegistrationOptions{
			Taints: []corev1.Taint{batchTaint},
			KubeletExtraArgs: []v1alpha1.Arg{
				{Name: "node-labels", Value: "team=data,example.com/tier=gold"},
				{Name: "max-pods", Value: "17"},
			},
		},
		map[string]string{corev1.LabelInstanceTypeStable: "c5.xlarge", corev1.LabelTopologyZone: "fake-1b"})

	// The bootstrap data Secret: named as the config, owned by it, labelled with the cluster.
	e.eventually("the SimConfig reports its data secret", func() bool {
		return e.get(m.config) && m.config.Status.DataSecretName == "worker-1"
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "launch", Name: "worker-1"}}
	if !e.get(secret) {
		t.Fatal("the bootstrap data Secret does not exist")
	}
	if secret.Labels[clusterv1.ClusterNameLabel] != clusterName || !metav1.IsControlledBy(secret, m.config) || len(secret.Data["value"]) == 0 {
		t.Errorf("bootstrap data Secret: labels %v, owners %v, keys %d; want the cluster label, the SimConfig as controller and a value",
			secret.Labels, secret.OwnerReferences, len(secret.Data))
	}

	// Without the Machine's bootstrap data, nothing launches.
	e.eventually("the SimMachine waits for bootstrap data", func() bool {
		return e.get(m.infra) && readyReason(m.infra) == simprovider.ReasonWaitingForBootstrapData
	})
	if n := len(e.cloud.Instances()); n != 0 {
		t.Fatalf("%d instances launched before the Machine had bootstrap data", n)
	}

	m.giveBootstrapData(e)
	e.eventually("the SimMachine is provisioned and powered on", func() bool {
		return e.get(m.infra) && ptr.Deref(m.infra.Status.Initialization.Provisioned, false) && m.infra.Status.PoweredOn
	})
	infra := m.infra
	if infra.Spec.ProviderID == "" || infra.Status.InstanceID == "" || path.Base(infra.Spec.ProviderID) != infra.Status.InstanceID {
		t.Fatalf("providerID %q, instanceID %q: want the instance's", infra.Spec.ProviderID, infra.Status.InstanceID)
	}
	instance, ok := e.instance(infra.Status.InstanceID)
	if !ok || instance.Type != "c5.xlarge" || instance.Zone != "fake-1b" || instance.CapacityType != "on-demand" || instance.ProviderID != infra.Spec.ProviderID {
		t.Errorf("instance = %+v, want an on-demand c5.xlarge in fake-1b with the SimMachine's provider ID", instance)
	}
	if infra.Status.FailureDomain != "fake-1b" || len(infra.Status.Addresses) == 0 {
		t.Errorf("status failureDomain %q, addresses %v: want fake-1b and the instance's addresses", infra.Status.FailureDomain, infra.Status.Addresses)
	}
	if !slices.ContainsFunc(infra.Finalizers, func(f string) bool { return f == simprovider.Finalizer }) {
		t.Errorf("finalizers = %v, want %s", infra.Finalizers, simprovider.Finalizer)
	}

	var node *corev1.Node
	e.eventually("a Ready Node registers with the SimMachine's provider ID", func() bool {
		node = e.node(infra.Spec.ProviderID)
		return node != nil && nodeReady(node)
	})
	for k, want := range map[string]string{"team": "data", "example.com/tier": "gold", corev1.LabelInstanceTypeStable: "c5.xlarge", corev1.LabelTopologyZone: "fake-1b"} {
		if got := node.Labels[k]; got != want {
			t.Errorf("Node label %s = %q, want %q", k, got, want)
		}
	}
	if !slices.ContainsFunc(node.Spec.Taints, func(taint corev1.Taint) bool { return taint.MatchTaint(&batchTaint) && taint.Value == batchTaint.Value }) {
		t.Errorf("Node taints = %v, want %v", node.Spec.Taints, batchTaint)
	}
	if pods := node.Status.Capacity[corev1.ResourcePods]; pods.Value() != 17 {
		t.Errorf("Node pods capacity = %s, want the bootstrap data's max-pods 17", pods.String())
	}
	if got := len(e.cloud.Instances()); got != 1 {
		t.Errorf("%d instances launched, want 1", got)
	}
}

// spec.online false stops the instance (its Node goes NotReady and stays), true starts it
// again (the Node is Ready again).
func TestSimMachineOnlineStopsAndStartsTheInstance(t *testing.T) {
	e := start(t)
	m := newMachine(e, "power", "worker-1", v1alpha1.NodeRegistrationOptions{},
		map[string]string{corev1.LabelInstanceTypeStable: "m5.large"})
	m.giveBootstrapData(e)
	e.eventually("the Node is Ready", func() bool {
		if !e.get(m.infra) {
			return false
		}
		node := e.node(m.infra.Spec.ProviderID)
		return node != nil && nodeReady(node)
	})
	id := m.infra.Status.InstanceID

	patch(e, m.infra, func(infra *v1alpha1.SimMachine) { infra.Spec.Online = ptr.To(false) })
	e.eventually("the instance is stopped and the SimMachine powered off", func() bool {
		instance, _ := e.instance(id)
		return instance.State == cloudprovider.StateStopped && e.get(m.infra) && !m.infra.Status.PoweredOn &&
			readyReason(m.infra) == simprovider.ReasonPoweredOff
	})
	node := e.node(m.infra.Spec.ProviderID)
	if node == nil || nodeReady(node) {
		t.Fatalf("Node of the stopped instance: %v, want it registered and not Ready", node)
	}
	if !ptr.Deref(m.infra.Status.Initialization.Provisioned, false) {
		t.Error("a powered-off SimMachine is no longer provisioned; want provisioned to stay true")
	}

	patch(e, m.infra, func(infra *v1alpha1.SimMachine) { infra.Spec.Online = ptr.To(true) })
	e.eventually("the instance runs, the SimMachine is powered on and the Node Ready again", func() bool {
		instance, _ := e.instance(id)
		node := e.node(m.infra.Spec.ProviderID)
		return instance.State == cloudprovider.StateRunning && e.get(m.infra) && m.infra.Status.PoweredOn &&
			node != nil && nodeReady(node)
	})
	if got := len(e.cloud.Instances()); got != 1 {
		t.Errorf("%d instances, want the one started again", got)
	}
}

// Deleting a SimMachine terminates its instance; the finalizer holds the SimMachine until
// the cloud reports the instance terminated.
func TestDeletingASimMachineTerminatesTheInstance(t *testing.T) {
	e := start(t)
	m := newMachine(e, "delete", "worker-1", v1alpha1.NodeRegistrationOptions{},
		map[string]string{corev1.LabelInstanceTypeStable: "m5.large"})
	m.giveBootstrapData(e)
	e.eventually("the SimMachine is powered on", func() bool { return e.get(m.infra) && m.infra.Status.PoweredOn })
	id := m.infra.Status.InstanceID

	if err := e.c.Delete(e.ctx, m.infra); err != nil {
		t.Fatal(err)
	}
	e.eventually("the instance is shutting down or terminated", func() bool {
		instance, _ := e.instance(id)
		return instance.State == cloudprovider.StateShuttingDown || instance.State == cloudprovider.StateTerminated
	})
	if instance, _ := e.instance(id); instance.State == cloudprovider.StateShuttingDown && !e.get(m.infra) {
		t.Fatal("the SimMachine was gone before its instance was terminated")
	}
	e.eventually("the SimMachine is gone", func() bool { return !e.get(m.infra) })
	if instance, _ := e.instance(id); instance.State != cloudprovider.StateTerminated {
		t.Errorf("instance state = %s after the SimMachine went, want terminated", instance.State)
	}
}

// An instance that vanishes from the cloud is reported in the Ready condition and an
// Event; it is not relaunched.
func TestAVanishedInstanceIsReported(t *testing.T) {
	e := start(t)
	m := newMachine(e, "vanish", "worker-1", v1alpha1.NodeRegistrationOptions{},
		map[string]string{corev1.LabelInstanceTypeStable: "m5.large"})
	m.giveBootstrapData(e)
	e.eventually("the SimMachine is powered on", func() bool { return e.get(m.infra) && m.infra.Status.PoweredOn })
	if err := e.cloud.Vanish(m.infra.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	// The machine would look again at its next resync; any change to it brings the look
	// forward.
	patch(e, m.infra, func(infra *v1alpha1.SimMachine) { infra.Annotations = map[string]string{"example.com/poke": "1"} })
	e.eventually("the SimMachine reports the instance vanished", func() bool {
		return e.get(m.infra) && readyReason(m.infra) == simprovider.ReasonInstanceVanished && !m.infra.Status.PoweredOn
	})
	e.eventually("an Event says so", func() bool {
		return slices.Contains(e.eventReasons("worker-1"), simprovider.ReasonInstanceVanished)
	})
	if got := len(e.cloud.Instances()); got != 0 {
		t.Errorf("%d instances, want none: a vanished instance is not relaunched", got)
	}
}

// A SimConfig whose kubelet flags a kubelet would refuse gets no data Secret, and says
// why in its Ready condition and an Event.
func TestAnInvalidSimConfigSaysWhy(t *testing.T) {
	e := start(t)
	m := newMachine(e, "invalid", "worker-1",
		v1alpha1.NodeRegistrationOptions{KubeletExtraArgs: []v1alpha1.Arg{{Name: "node-labels", Value: "team"}}},
		map[string]string{corev1.LabelInstanceTypeStable: "m5.large"})
	e.eventually("the SimConfig reports the invalid configuration", func() bool {
		if !e.get(m.config) {
			return false
		}
		c := meta.FindStatusCondition(m.config.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == simprovider.ReasonInvalidConfiguration
	})
	e.eventually("an Event says so", func() bool {
		return slices.Contains(e.eventReasons("worker-1"), simprovider.ReasonInvalidConfiguration)
	})
	if m.config.Status.DataSecretName != "" || e.get(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "invalid", Name: "worker-1"}}) {
		t.Error("an invalid SimConfig got a data secret")
	}
}

// A SimMachine without an instance type label launches nothing and says why, in its
// Ready condition and an Event, once its Machine has bootstrap data.
func TestASimMachineWithoutAnInstanceTypeSaysWhy(t *testing.T) {
	e := start(t)
	m := newMachine(e, "untyped", "worker-1", v1alpha1.NodeRegistrationOptions{}, nil)
	m.giveBootstrapData(e)
	e.eventually("the SimMachine reports the invalid spec", func() bool {
		return e.get(m.infra) && readyReason(m.infra) == simprovider.ReasonInvalidSpec
	})
	e.eventually("an Event says so", func() bool {
		return slices.Contains(e.eventReasons("worker-1"), simprovider.ReasonInvalidSpec)
	})
	if got := len(e.cloud.Instances()); got != 0 || m.infra.Spec.ProviderID != "" {
		t.Errorf("%d instances, provider ID %q: want none", got, m.infra.Spec.ProviderID)
	}
}

func conditionIs(conditions []metav1.Condition, conditionType string, status metav1.ConditionStatus) bool {
	c := meta.FindStatusCondition(conditions, conditionType)
	return c != nil && c.Status == status
}

// While their Cluster is paused, a SimConfig writes no data and a SimMachine launches
// nothing, and both say so in their Paused condition; unpaused, they go on.
func TestAPausedClusterHoldsItsMachines(t *testing.T) {
	e := start(t)
	e.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "paused"}})
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "paused", Name: clusterName},
		Spec:       clusterv1.ClusterSpec{Paused: ptr.To(true)},
	}
	e.create(cluster)
	m := newMachine(e, "paused", "worker-1", v1alpha1.NodeRegistrationOptions{},
		map[string]string{corev1.LabelInstanceTypeStable: "m5.large"})
	e.eventually("the SimConfig and the SimMachine report the pause", func() bool {
		return e.get(m.config) && conditionIs(m.config.Status.Conditions, clusterv1.PausedCondition, metav1.ConditionTrue) &&
			e.get(m.infra) && conditionIs(m.infra.Status.Conditions, clusterv1.PausedCondition, metav1.ConditionTrue)
	})
	if m.config.Status.DataSecretName != "" {
		t.Errorf("a paused SimConfig wrote its data secret %s", m.config.Status.DataSecretName)
	}

	patch(e, cluster, func(c *clusterv1.Cluster) { c.Spec.Paused = ptr.To(false) })
	m.giveBootstrapData(e)
	e.eventually("the SimMachine is powered on and no longer paused", func() bool {
		return e.get(m.infra) && m.infra.Status.PoweredOn && conditionIs(m.infra.Status.Conditions, clusterv1.PausedCondition, metav1.ConditionFalse)
	})
}
