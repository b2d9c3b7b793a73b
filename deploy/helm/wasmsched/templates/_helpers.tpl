{{/* The chart's name, and the release's full name (objects are named by it; "wasmsched" for a release named wasmsched). */}}
{{- define "wasmsched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "wasmsched.fullname" -}}
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

{{- define "wasmsched.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "wasmsched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wasmsched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "wasmsched.labels" -}}
helm.sh/chart: {{ include "wasmsched.chart" . }}
{{ include "wasmsched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "wasmsched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "wasmsched.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "wasmsched.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The profile's schedulerName: the pods whose spec.schedulerName it is are wasmsched's. */}}
{{- define "wasmsched.schedulerName" -}}
{{- if .Values.schedulerName }}
{{- .Values.schedulerName }}
{{- else if eq .Values.mode "only" }}
{{- "default-scheduler" }}
{{- else }}
{{- "wasmsched" }}
{{- end }}
{{- end }}

{{/* The Lease: in mode only kube-scheduler's own (kube-system/kube-scheduler), so a kube-scheduler started
by mistake waits for it instead of scheduling beside wasmsched; in mode second one of wasmsched's. */}}
{{- define "wasmsched.leaseName" -}}
{{- if .Values.leaderElection.resourceName }}
{{- .Values.leaderElection.resourceName }}
{{- else if eq .Values.mode "only" }}
{{- "kube-scheduler" }}
{{- else }}
{{- include "wasmsched.fullname" . }}
{{- end }}
{{- end }}

{{- define "wasmsched.leaseNamespace" -}}
{{- if .Values.leaderElection.resourceNamespace }}
{{- .Values.leaderElection.resourceNamespace }}
{{- else if eq .Values.mode "only" }}
{{- "kube-system" }}
{{- else }}
{{- .Release.Namespace }}
{{- end }}
{{- end }}

{{/* Where a plugin's files are mounted: one directory per plugin, named by its index (volume names must
be DNS labels; plugin names need not be). */}}
{{- define "wasmsched.guestDir" -}}
{{- printf "/var/lib/wasmsched/plugins/%d" . }}
{{- end }}

{{/* The chart-created ConfigMap holding a plugin's guest (guest.configMap.binaryData). */}}
{{- define "wasmsched.guestConfigMapName" -}}
{{- $ := index . 0 }}{{- $i := index . 1 }}
{{- printf "%s-guest-%d" (include "wasmsched.fullname" $) $i | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* A file reference of a plugin's OCI settings ({configMap|secret, key}) as a volume source. */}}
{{- define "wasmsched.fileVolumeSource" -}}
{{- $ref := index . 0 }}{{- $file := index . 1 }}{{- $what := index . 2 }}
{{- if and $ref.configMap $ref.secret }}
{{- fail (printf "%s: give configMap or secret, not both" $what) }}
{{- else if $ref.configMap }}
configMap:
  name: {{ $ref.configMap }}
  items:
  - key: {{ required (printf "%s.key is required" $what) $ref.key }}
    path: {{ $file }}
{{- else if $ref.secret }}
secret:
  secretName: {{ $ref.secret }}
  items:
  - key: {{ required (printf "%s.key is required" $what) $ref.key }}
    path: {{ $file }}
{{- else }}
{{- fail (printf "%s: give configMap or secret" $what) }}
{{- end }}
{{- end }}

{{/* The guest source of plugin (index . 1): which one of path, oci, image, configMap; fails unless exactly one. */}}
{{- define "wasmsched.guestSource" -}}
{{- $p := index . 0 }}
{{- $g := $p.guest | default dict }}
{{- $set := list }}
{{- range $k := list "path" "oci" "image" "configMap" }}
{{- if hasKey $g $k }}{{- $set = append $set $k }}{{- end }}
{{- end }}
{{- if ne (len $set) 1 }}
{{- fail (printf "plugins[%d] (%s): guest needs exactly one of path, oci, image, configMap; got %v" (index . 1) $p.name $set) }}
{{- end }}
{{- first $set }}
{{- end }}

{{/* A plugin's guestURL. */}}
{{- define "wasmsched.guestURL" -}}
{{- $p := index . 0 }}{{- $i := index . 1 }}
{{- $src := include "wasmsched.guestSource" (list $p $i) }}
{{- $dir := include "wasmsched.guestDir" $i }}
{{- if eq $src "path" }}
{{- required (printf "plugins[%d].guest.path is empty" $i) $p.guest.path }}
{{- else if eq $src "oci" }}
{{- $url := required (printf "plugins[%d].guest.oci.url is required" $i) $p.guest.oci.url }}
{{- if not (hasPrefix "oci://" $url) }}
{{- fail (printf "plugins[%d].guest.oci.url must start with oci://, got %q" $i $url) }}
{{- end }}
{{- $url }}
{{- else if eq $src "image" }}
{{- $_ := required (printf "plugins[%d].guest.image.reference is required" $i) $p.guest.image.reference }}
{{- printf "%s/image/%s" $dir (required (printf "plugins[%d].guest.image.path (the .wasm file in the image) is required" $i) $p.guest.image.path | trimPrefix "/") }}
{{- else }}
{{- printf "%s/configmap/%s" $dir (required (printf "plugins[%d].guest.configMap.key is required" $i) $p.guest.configMap.key) }}
{{- end }}
{{- end }}

{{/* The plugin's args: the guest's URL and settings, then the args passthrough (explicit settings win). */}}
{{- define "wasmsched.pluginArgs" -}}
{{- $p := index . 0 }}{{- $i := index . 1 }}
{{- $dir := include "wasmsched.guestDir" $i }}
{{- $args := deepCopy ($p.args | default dict) }}
{{- $_ := set $args "guestURL" (include "wasmsched.guestURL" (list $p $i)) }}
{{- if $p.guestConfig }}{{- $_ := set $args "guestConfig" $p.guestConfig }}{{- end }}
{{- if $p.failurePolicy }}
{{- if not (has $p.failurePolicy (list "Fail" "Ignore")) }}
{{- fail (printf "plugins[%d].failurePolicy must be Fail or Ignore, got %q" $i $p.failurePolicy) }}
{{- end }}
{{- $_ := set $args "failurePolicy" $p.failurePolicy }}
{{- end }}
{{- if $p.reloadInterval }}{{- $_ := set $args "reloadInterval" $p.reloadInterval }}{{- end }}
{{- if $p.watch }}{{- $_ := set $args "watch" $p.watch }}{{- end }}
{{- if eq (include "wasmsched.guestSource" (list $p $i)) "oci" }}
{{- $oci := $p.guest.oci }}
{{- if $oci.plainHTTP }}{{- $_ := set $args "plainHTTP" true }}{{- end }}
{{- if $oci.ca }}{{- $_ := set $args "caFile" (printf "%s/ca/ca.crt" $dir) }}{{- end }}
{{- if $oci.registryConfig }}{{- $_ := set $args "registryConfig" (printf "%s/registry/config.json" $dir) }}{{- end }}
{{- if and $oci.verify $oci.verify.publicKey }}
{{- $_ := set $args "verify" (dict "publicKey" (printf "%s/verify/key.pub" $dir)) }}
{{- end }}
{{- end }}
{{- toYaml $args }}
{{- end }}

{{/* The KubeSchedulerConfiguration (the same file `wasmsched simulate --config` takes). */}}
{{- define "wasmsched.schedulerConfig" -}}
{{- $le := dict "leaderElect" .Values.leaderElection.enabled "resourceLock" "leases" "resourceName" (include "wasmsched.leaseName" .) "resourceNamespace" (include "wasmsched.leaseNamespace" .) }}
{{- range $k := list "leaseDuration" "renewDeadline" "retryPeriod" }}
{{- with index $.Values.leaderElection $k }}{{- $_ := set $le $k . }}{{- end }}
{{- end }}
{{- $enabled := list }}
{{- $pluginConfig := list }}
{{- range $i, $p := .Values.plugins }}
{{- $name := required (printf "plugins[%d].name is required" $i) $p.name }}
{{- $e := dict "name" $name }}
{{- if $p.weight }}{{- $_ := set $e "weight" $p.weight }}{{- end }}
{{- $enabled = append $enabled $e }}
{{- $pluginConfig = append $pluginConfig (dict "name" $name "args" (include "wasmsched.pluginArgs" (list $p $i) | fromYaml)) }}
{{- end }}
{{- $plugins := deepCopy (.Values.profile.plugins | default dict) }}
{{- $mp := deepCopy (get $plugins "multiPoint" | default dict) }}
{{- $_ := set $mp "enabled" (concat $enabled ($mp.enabled | default list)) }}
{{- $_ := set $plugins "multiPoint" $mp }}
{{- $profile := dict "schedulerName" (include "wasmsched.schedulerName" .) "plugins" $plugins "pluginConfig" (concat $pluginConfig (.Values.profile.pluginConfig | default list)) }}
{{- $cfg := deepCopy (.Values.schedulerConfig | default dict) }}
{{- $_ := set $cfg "apiVersion" "kubescheduler.config.k8s.io/v1" }}
{{- $_ := set $cfg "kind" "KubeSchedulerConfiguration" }}
{{- $_ := set $cfg "leaderElection" $le }}
{{- $_ := set $cfg "profiles" (list $profile) }}
{{- toYaml $cfg }}
{{- end }}

{{/* The resources the ServiceAccount reads besides rbac.yaml's: the plugins' watch and rbac.extraWatched,
as {group: [resource...]} (one rule per group). */}}
{{- define "wasmsched.watched" -}}
{{- $by := dict }}
{{- range $p := .Values.plugins }}
{{- range $w := $p.watch }}
{{- $_ := set $by $w.group (append (get $by $w.group | default list) $w.resource | uniq) }}
{{- end }}
{{- end }}
{{- range $w := .Values.rbac.extraWatched }}
{{- $_ := set $by $w.group (append (get $by $w.group | default list) $w.resource | uniq) }}
{{- end }}
{{- toYaml $by }}
{{- end }}
