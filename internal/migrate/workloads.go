package migrate

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workloadKinds are the workloads scanned, by apiVersion and kind, with where their pod
// template is.
var workloadKinds = map[string]string{
	"apps/v1/Deployment":  "spec.template",
	"apps/v1/StatefulSet": "spec.template",
	"apps/v1/DaemonSet":   "spec.template",
	"apps/v1/ReplicaSet":  "spec.template",
	"batch/v1/Job":        "spec.template",
	"batch/v1/CronJob":    "spec.jobTemplate.spec.template",
	"v1/Pod":              "",
}

func isWorkload(o Object) bool {
	_, ok := workloadKinds[o.APIVersion()+"/"+o.Kind()]
	return ok
}

// scanWorkload lists where a workload's pods use Karpenter's labels or annotations. Pods
// and ReplicaSets that have an owner are their owner's business: the owner is reported.
func scanWorkload(o Object) ([]WorkloadFinding, error) {
	meta, template, err := podTemplate(o)
	if err != nil {
		return nil, err
	}
	if len(meta.OwnerReferences) > 0 && (o.Kind() == "Pod" || o.Kind() == "ReplicaSet") {
		return nil, nil
	}
	prefix := workloadKinds[o.APIVersion()+"/"+o.Kind()]
	at := func(field string) string {
		if prefix == "" {
			return field
		}
		return prefix + "." + field
	}
	w := workloadScan{base: WorkloadFinding{Kind: o.Kind(), Namespace: meta.Namespace, Name: meta.Name, Source: o.Source}}
	if _, ok := template.Annotations[karpenterDoNotDisrupt]; ok {
		w.add(at("metadata.annotations"), karpenterDoNotDisrupt, "stratos.sh/do-not-disrupt", "")
	}
	spec := template.Spec
	for _, k := range sortedKeys(spec.NodeSelector) {
		w.label(at("spec.nodeSelector"), k, spec.NodeSelector[k])
	}
	if a := spec.Affinity; a != nil {
		if na := a.NodeAffinity; na != nil {
			if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
				for i, term := range req.NodeSelectorTerms {
					for _, e := range term.MatchExpressions {
						w.label(at(fmt.Sprintf("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", i)), e.Key, e.Values...)
					}
				}
			}
			for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
				for _, e := range pref.Preference.MatchExpressions {
					w.label(at(fmt.Sprintf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d]", i)), e.Key, e.Values...)
				}
			}
		}
		if pa := a.PodAffinity; pa != nil {
			w.podTerms(at("spec.affinity.podAffinity"), pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if anti := a.PodAntiAffinity; anti != nil {
			w.podTerms(at("spec.affinity.podAntiAffinity"), anti.RequiredDuringSchedulingIgnoredDuringExecution, anti.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for i, c := range spec.TopologySpreadConstraints {
		w.label(at(fmt.Sprintf("spec.topologySpreadConstraints[%d].topologyKey", i)), c.TopologyKey)
	}
	return w.found, nil
}

type workloadScan struct {
	base  WorkloadFinding
	found []WorkloadFinding
}

func (w *workloadScan) add(field, key, stratos, note string) {
	f := w.base
	f.Field, f.Key, f.Stratos, f.Note = field, key, stratos, note
	w.found = append(w.found, f)
}

// label records a use of a Karpenter label key, with values where it has them.
func (w *workloadScan) label(field, key string, values ...string) {
	if !isKarpenterKey(key) {
		return
	}
	stratos, why := stratosKeyFor(key)
	note := why
	if key == karpenterCapacityType {
		for _, v := range values {
			if v == capacityTypeReserved {
				note = "Stratos has no reserved capacity type: its values are on-demand and spot"
			}
		}
	}
	w.add(field, key, stratos, note)
}

func (w *workloadScan) podTerms(field string, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
	for i, t := range required {
		w.label(fmt.Sprintf("%s.requiredDuringSchedulingIgnoredDuringExecution[%d].topologyKey", field, i), t.TopologyKey)
	}
	for i, t := range preferred {
		w.label(fmt.Sprintf("%s.preferredDuringSchedulingIgnoredDuringExecution[%d].podAffinityTerm.topologyKey", field, i), t.PodAffinityTerm.TopologyKey)
	}
}

// podTemplate decodes a workload's metadata and pod template with Kubernetes' own types.
func podTemplate(o Object) (metav1.ObjectMeta, corev1.PodTemplateSpec, error) {
	data, err := json.Marshal(o.Raw)
	if err != nil {
		return metav1.ObjectMeta{}, corev1.PodTemplateSpec{}, err
	}
	switch o.Kind() {
	case "Pod":
		var pod corev1.Pod
		err = json.Unmarshal(data, &pod)
		return pod.ObjectMeta, corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}, err
	case "CronJob":
		var cj batchv1.CronJob
		err = json.Unmarshal(data, &cj)
		return cj.ObjectMeta, cj.Spec.JobTemplate.Spec.Template, err
	case "Job":
		var job batchv1.Job
		err = json.Unmarshal(data, &job)
		return job.ObjectMeta, job.Spec.Template, err
	case "DaemonSet":
		var ds appsv1.DaemonSet
		err = json.Unmarshal(data, &ds)
		return ds.ObjectMeta, ds.Spec.Template, err
	case "StatefulSet":
		var ss appsv1.StatefulSet
		err = json.Unmarshal(data, &ss)
		return ss.ObjectMeta, ss.Spec.Template, err
	case "ReplicaSet":
		var rs appsv1.ReplicaSet
		err = json.Unmarshal(data, &rs)
		return rs.ObjectMeta, rs.Spec.Template, err
	default:
		var d appsv1.Deployment
		err = json.Unmarshal(data, &d)
		return d.ObjectMeta, d.Spec.Template, err
	}
}
