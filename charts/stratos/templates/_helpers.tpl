{{/* The chart's name. */}}
{{- define "stratos.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The objects' name: the release name, with the chart's appended unless it holds it. */}}
{{- define "stratos.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "stratos.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "stratos.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the operator's pods. */}}
{{- define "stratos.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stratos.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The operator's ServiceAccount. */}}
{{- define "stratos.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "stratos.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: repository with the digest, else the tag, else the appVersion. */}}
{{- define "stratos.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The namespace of the leader-election Lease. */}}
{{- define "stratos.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* The namespace of the pre-pull pods. */}}
{{- define "stratos.prePullNamespace" -}}
{{- default .Release.Namespace .Values.settings.prePullNamespace }}
{{- end }}

{{/*
The namespaces the operator's Role is granted in, as a YAML list: the release's, the
Lease's and the pre-pull pods'. The Role's rules are the generated ones for all three
(leases, leader-election Events, pre-pull pods); they are usually one namespace.
*/}}
{{- define "stratos.roleNamespaces" -}}
{{- toYaml (uniq (list .Release.Namespace (include "stratos.leaderElectionNamespace" .) (include "stratos.prePullNamespace" .))) }}
{{- end }}

{{/* Whether the fake cloud's kubelets run inside the operator: "true" or "". */}}
{{- define "stratos.inProcessFakeKubelets" -}}
{{- if and (eq .Values.settings.cloudProvider "fake") (not .Values.fake.endpoint) }}true{{ end }}
{{- end }}

{{/*
Whether the chart installs the CapacityBuffer CRD: "true" or "false". true and false are
what capacityBuffers.installCRD says; auto installs it unless the cluster has one this
release does not manage (Cluster Autoscaler's or Karpenter's, say), which lookup finds
(helm template without a cluster finds none, and installs it). A CRD this release
installed is rendered again, so that upgrades keep it up to date.
*/}}
{{- define "stratos.installCapacityBufferCRD" -}}
{{- $mode := toString .Values.capacityBuffers.installCRD }}
{{- if eq $mode "true" }}true
{{- else if eq $mode "false" }}false
{{- else }}
{{- $existing := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "capacitybuffers.autoscaling.x-k8s.io" }}
{{- if not $existing }}true
{{- else }}
{{- $annotations := default dict $existing.metadata.annotations }}
{{- $ours := and (eq (get $annotations "meta.helm.sh/release-name") .Release.Name) (eq (get $annotations "meta.helm.sh/release-namespace") .Release.Namespace) }}
{{- if $ours }}true{{ else }}false{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The rules of one role in a file `make generate` wrote from the code's RBAC markers
(files/rbac, copied from config/rbac): dict "root" $ "file" PATH "kind" ClusterRole|Role,
and "namespace" NS to choose among Roles by the namespace their markers name (the
operator's own is "stratos" there). The rules are never written by hand here, so the
chart grants what the code asks for.
*/}}
{{- define "stratos.generatedRules" -}}
{{- $found := list }}
{{- range regexSplit "(?m)^---[ \t]*$" (.root.Files.Get .file) -1 }}
{{- $doc := fromYaml . }}
{{- if and $doc (eq (get $doc "kind") $.kind) (or (not $.namespace) (eq $doc.metadata.namespace $.namespace)) }}
{{- $found = append $found $doc }}
{{- end }}
{{- end }}
{{- if ne (len $found) 1 }}
{{- fail (printf "%s: expected one %s, found %d (run make generate)" .file .kind (len $found)) }}
{{- end }}
{{- toYaml (first $found).rules }}
{{- end }}

{{/* The namespace of a generated Role (the fake kubelets' is kube-node-lease). */}}
{{- define "stratos.generatedRoleNamespace" -}}
{{- range regexSplit "(?m)^---[ \t]*$" (.root.Files.Get .file) -1 }}
{{- $doc := fromYaml . }}
{{- if and $doc (eq (get $doc "kind") "Role") }}{{ $doc.metadata.namespace }}{{ end }}
{{- end }}
{{- end }}

{{/*
The operator's arguments, one flag per setting (docs/operations.md). Settings whose value
is empty are left out, so the binary's default (or its STRATOS_ variable) holds.
*/}}
{{- define "stratos.args" -}}
{{- $s := .Values.settings }}
{{- $le := .Values.leaderElection }}
{{- $flags := list
  (list "cluster-name" (required "settings.clusterName is required: the EKS cluster's name" $s.clusterName))
  (list "cloud-provider" $s.cloudProvider)
  (list "kubeconfig" $s.kubeconfig)
  (list "kube-api-qps" (toString $s.kubeAPIQPS))
  (list "kube-api-burst" (toString (int64 $s.kubeAPIBurst)))
  (list "batch-idle-duration" $s.batchIdleDuration)
  (list "batch-max-duration" $s.batchMaxDuration)
  (list "launch-timeout" $s.launchTimeout)
  (list "registration-timeout" $s.registrationTimeout)
  (list "initialization-timeout" $s.initializationTimeout)
  (list "start-timeout" $s.startTimeout)
  (list "stop-timeout" $s.stopTimeout)
  (list "abandon-blocked-drain-after" $s.abandonBlockedDrainAfter)
  (list "pool-max-creations-per-pass" (toString (int64 $s.poolMaxCreationsPerPass)))
  (list "pool-max-creations-per-minute" (toString (int64 $s.poolMaxCreationsPerMinute)))
  (list "warmup-failure-backoff" $s.warmupFailureBackoff)
  (list "warmup-failure-backoff-max" $s.warmupFailureBackoffMax)
  (list "gc-interval" $s.gcInterval)
  (list "gc-grace-period" $s.gcGracePeriod)
  (list "unavailable-offering-ttl" $s.unavailableOfferingTTL)
  (list "graceful-shutdown-timeout" $s.gracefulShutdownTimeout)
  (list "kubernetes-version" $s.kubernetesVersion)
  (list "prepull-namespace" (include "stratos.prePullNamespace" .))
  (list "calendar-file" $s.calendarFile)
  (list "pod-scope" $s.podScope)
  (list "cluster-autoscaler-status-configmap" $s.clusterAutoscalerStatusConfigMap)
  (list "leader-elect" (toString $le.enabled))
  (list "leader-election-id" $le.id)
  (list "leader-election-namespace" (include "stratos.leaderElectionNamespace" .))
  (list "leader-election-lease-duration" $le.leaseDuration)
  (list "leader-election-renew-deadline" $le.renewDeadline)
  (list "leader-election-retry-period" $le.retryPeriod)
  (list "metrics-bind-address" (printf ":%d" (int .Values.metrics.port)))
  (list "health-probe-bind-address" (printf ":%d" (int .Values.health.port)))
  (list "log-level" .Values.logging.level)
  (list "log-format" .Values.logging.format)
}}
{{- if and $s.interruptionQueue (ne $s.cloudProvider "aws") }}
{{- fail "settings.interruptionQueue needs settings.cloudProvider aws: the fake cloud posts its notices to a queue of its own, and Cluster API has none" }}
{{- end }}
{{- if and $s.kubernetesVersion (eq $s.cloudProvider "clusterapi") }}
{{- fail "settings.kubernetesVersion does not apply to settings.cloudProvider clusterapi: a ClusterAPINodeClass's spec.version is its Machines' version" }}
{{- end }}
{{- if eq $s.cloudProvider "aws" }}
{{- $a := .Values.aws }}
{{- $flags = concat $flags (list
  (list "aws-region" $a.region)
  (list "aws-endpoint" $a.endpoint)
  (list "aws-ssm-parameter-root" $a.ssmParameterRoot)
  (list "cluster-endpoint" $a.clusterEndpoint)
  (list "cluster-ca-file" $a.clusterCAFile)
  (list "cluster-service-cidr" $a.clusterServiceCIDR)
  (list "interruption-queue" $s.interruptionQueue)
) }}
{{- end }}
{{- if eq $s.cloudProvider "fake" }}
{{- $f := .Values.fake }}
{{- $flags = concat $flags (list
  (list "fake-time-scale" (toString $f.timeScale))
  (list "fake-seed" (toString (int64 $f.seed)))
  (list "fake-cloud-endpoint" $f.endpoint)
) }}
{{- end }}
{{- range $flags }}
{{- if ne (index . 1) "" }}
- {{ printf "--%s=%s" (index . 0) (index . 1) | quote }}
{{- end }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}
