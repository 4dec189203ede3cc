package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stratos-sh/stratos/test/harness"
)

// runBinary runs the built binary with args and returns its output and exit code.
func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// `stratos explain pod` reads a pod through a kubeconfig, with its flags before or
// after the name, and prints JSON on -o json; a missing pod fails with exit code 1,
// and a wrong usage with 2.
func TestExplainPodThroughAKubeconfig(t *testing.T) {
	env := harness.StartT(t)
	kubeconfig := writeKubeconfig(t, env)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	base := pod.DeepCopy()
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/2 nodes are available: 2 Insufficient cpu.", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Patch(ctx, pod, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runBinary(t, "explain", "pod", "web", "-n", "default", "--kubeconfig", kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, errOut)
	}
	var got struct {
		Summary   string `json:"summary"`
		Scheduler struct {
			Message string `json:"message"`
		} `json:"scheduler"`
		Scope struct {
			Provisionable bool `json:"provisionable"`
		} `json:"scope"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if !got.Scope.Provisionable || got.Scheduler.Message != "0/2 nodes are available: 2 Insufficient cpu." || !strings.Contains(got.Summary, "Stratos has recorded no decision") {
		t.Fatalf("explained as %+v", got)
	}

	out, _, code = runBinary(t, "explain", "--kubeconfig", kubeconfig, "pod", "web")
	if code != 0 || !strings.Contains(out, "Pod default/web (Pending)") || !strings.Contains(out, "2 Insufficient cpu") {
		t.Fatalf("text output (exit %d):\n%s", code, out)
	}

	if _, errOut, code = runBinary(t, "explain", "pod", "absent", "--kubeconfig", kubeconfig); code != 1 || !strings.Contains(errOut, "pod absent not found in namespace default") {
		t.Fatalf("a missing pod: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{"explain", "web"}, {"explain", "pod"}, {"explain", "pod", "web", "-o", "yaml"}, {"explain", "pod", "web", "--bogus"}} {
		if _, _, code := runBinary(t, args...); code != 2 {
			t.Errorf("%v: exit code %d, want 2", args, code)
		}
	}
}
