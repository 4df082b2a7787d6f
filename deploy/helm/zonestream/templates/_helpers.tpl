{{- define "zonestream.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "zonestream.fullname" -}}
{{- if .Values.fullnameOverride -}}{{ .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else -}}{{- $name := include "zonestream.name" . -}}
{{- if contains $name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}
{{- end -}}

{{- define "zonestream.labels" -}}
app.kubernetes.io/part-of: zonestream
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The labels that select a component's pods: root, component. */}}
{{- define "zonestream.selector" -}}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/name: zonestream-{{ .component }}
{{- end -}}

{{- define "zonestream.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "zonestream.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}{{ .Values.serviceAccount.name | default (include "zonestream.fullname" .) }}{{- else -}}{{ .Values.serviceAccount.name | default "default" }}{{- end -}}
{{- end -}}

{{/* provider.name, or provider itself when a string (ExternalDNS' chart
takes both). */}}
{{- define "zonestream.provider" -}}
{{- if kindIs "string" .Values.provider -}}{{ .Values.provider }}{{- else -}}{{ required "provider.name is needed" .Values.provider.name }}{{- end -}}
{{- end -}}

{{/* The provider's settings as a map, whichever form provider has. */}}
{{- define "zonestream.providerValues" -}}
{{- if kindIs "string" .Values.provider -}}{}{{- else -}}{{ toJson .Values.provider }}{{- end -}}
{{- end -}}

{{/* The bus' URL: the bundled NATS' Service, or nats.url. */}}
{{- define "zonestream.natsURL" -}}
{{- if .Values.nats.bundled -}}nats://{{ include "zonestream.fullname" . }}-nats:4222{{- else -}}{{ required "nats.url is needed when nats.bundled is false" .Values.nats.url }}{{- end -}}
{{- end -}}

{{/* The identity a stage has on the bus (events/permissions.go). */}}
{{- define "zonestream.identity" -}}
{{- $stage := .stage -}}
{{- if eq $stage "collector" -}}collector-{{ .root.Values.clusterName }}{{- else if and (eq $stage "applier") .root.Values.dnsProviders.enabled -}}applier-dnsproviders{{- else if eq $stage "applier" -}}applier-{{ include "zonestream.provider" .root }}{{- else -}}{{ $stage }}{{- end -}}
{{- end -}}

{{/* The secret flags of the provider, and the planner's AES key: flag ->
{name, key} of an existing Secret. */}}
{{- define "zonestream.secretFlags" -}}
{{- $v := .root.Values -}}
{{- $p := include "zonestream.providerValues" .root | fromJson -}}
{{- $out := dict -}}
{{- if has .stage (list "applier" "allinone") -}}
{{- $out = index ($p.secrets | default dict) (include "zonestream.provider" .root) | default dict -}}
{{- end -}}
{{- if and (has .stage (list "planner" "allinone")) $v.txtEncryptAesKeySecret.name -}}
{{- $_ := set $out "txt-encrypt-aes-key" $v.txtEncryptAesKeySecret -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* extraArgs: a list of arguments, or a map of flag -> value (or list
of values), as ExternalDNS' chart. */}}
{{- define "zonestream.extraArgs" -}}
{{- $root := .root -}}
{{- if kindIs "map" .args -}}
{{- range $k, $v := .args }}
{{- if kindIs "slice" $v }}{{ range $v }}
- --{{ $k }}={{ tpl (toString .) $root }}
{{- end }}{{- else if kindIs "invalid" $v }}
- --{{ $k }}
{{- else }}
- --{{ $k }}={{ tpl (toString $v) $root }}
{{- end }}
{{- end }}
{{- else -}}
{{- range .args }}
- {{ tpl (toString .) $root | quote }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* A zonestream container's arguments: root, stage (allinone or a
stage's name). Each value goes to the stages that take its flag. */}}
{{- define "zonestream.args" -}}
{{- $v := .root.Values -}}{{- $s := .stage -}}{{- $root := .root -}}
{{- $provider := include "zonestream.provider" $root -}}
{{- $p := include "zonestream.providerValues" $root | fromJson -}}
{{- $collector := has $s (list "allinone" "collector") -}}
{{- $planner := has $s (list "allinone" "planner") -}}
{{- $portal := has $s (list "allinone" "portal") -}}
{{- $applier := has $s (list "allinone" "applier") -}}
{{- if ne $s "allinone" }}
- {{ $s }}
{{- end }}
- --log-level={{ $v.logLevel }}
- --log-format={{ $v.logFormat }}
{{- if eq $s "allinone" }}
- --data-dir=/data
{{- else }}
- --nats-url={{ include "zonestream.natsURL" $root }}
{{- $type := $v.nats.credentials.type }}
{{- if eq $type "password" }}
- --nats-user={{ include "zonestream.identity" . }}
- --nats-password-file=/etc/zonestream/nats/password
{{- else if eq $type "nkey" }}
- --nats-nkey=/etc/zonestream/nats/nkey
{{- else if eq $type "creds" }}
- --nats-creds=/etc/zonestream/nats/creds
{{- end }}
{{- if ne $type "none" }}
- --nats-inbox-prefix=_INBOX.{{ include "zonestream.identity" . }}
{{- end }}
{{- if $v.nats.tls.secret }}
- --nats-tls-ca=/etc/zonestream/nats-tls/ca.crt
{{- if $v.nats.tls.clientCert }}
- --nats-tls-cert=/etc/zonestream/nats-tls/tls.crt
- --nats-tls-key=/etc/zonestream/nats-tls/tls.key
{{- end }}
{{- end }}
{{- if ne (int $v.nats.streamReplicas) 1 }}
- --nats-stream-replicas={{ $v.nats.streamReplicas }}
{{- end }}
{{- if and $v.nats.jsDomain (eq $s "collector") }}
- --nats-js-domain={{ $v.nats.jsDomain }}
{{- end }}
{{- end }}
{{- if $collector }}
- --cluster-name={{ $v.clusterName }}
{{- range $v.sources }}
- --source={{ . }}
{{- end }}
{{- if has "unstructured" $v.sources }}
{{- range $v.unstructuredResources }}
- --unstructured-resource={{ . }}
{{- end }}
{{- end }}
{{- if $v.namespaced }}
- --namespace={{ $root.Release.Namespace }}
{{- end }}
{{- with $v.gatewayNamespace }}
- --gateway-namespace={{ . }}
{{- end }}
{{- with $v.labelFilter }}
- --label-filter={{ . }}
{{- end }}
{{- with $v.annotationFilter }}
- --annotation-filter={{ . }}
{{- end }}
{{- with $v.annotationPrefix }}
- --annotation-prefix={{ . }}
{{- end }}
{{- end }}
{{- if and $v.triggerLoopOnEvent (eq $s "allinone") }}
- --events
{{- end }}
{{- if has $s (list "allinone" "dedup") }}
- --source-priority={{ join "," $v.sourcePriority }}
{{- end }}
{{- if or $collector $planner }}
{{- range $v.managedRecordTypes }}
- --managed-record-types={{ . }}
{{- end }}
{{- end }}
{{- if or $collector $planner $portal (and $applier (eq $v.registry "crd")) }}
{{- with $v.txtOwnerId }}
- --txt-owner-id={{ . }}
{{- end }}
{{- with $v.txtPrefix }}
- --txt-prefix={{ . }}
{{- end }}
{{- with $v.txtSuffix }}
- --txt-suffix={{ . }}
{{- end }}
{{- end }}
{{- if or $planner $portal }}
{{- range $v.domainFilters }}
- --domain-filter={{ . }}
{{- end }}
{{- range $v.excludeDomains }}
- --exclude-domains={{ . }}
{{- end }}
{{- with $v.regexDomainFilter }}
- --regex-domain-filter={{ . }}
{{- end }}
{{- with $v.regexDomainExclusion }}
- --regex-domain-exclusion={{ . }}
{{- end }}
{{- end }}
{{- if $planner }}
{{- range $v.excludeRecordTypes }}
- --exclude-record-types={{ . }}
{{- end }}
- --registry={{ $v.registry }}
- --policy={{ $v.policy }}
{{- if $v.txtEncryptAesKeySecret.name }}
- --txt-encrypt-enabled
{{- end }}
{{- end }}
{{- if and $portal $v.portal.enabled }}
- --portal-listen=0.0.0.0:8080
{{- with $v.portal.resolver }}
- --portal-resolver={{ . }}
{{- end }}
{{- end }}
{{- if $applier }}
{{- if and (eq $v.registry "crd") (not $planner) }}
- --registry=crd
{{- end }}
- --provider={{ $provider }}
- --interval={{ $v.interval }}
{{- range $flag, $value := index ($p.args | default dict) $provider }}
- --{{ $flag }}={{ $value }}
{{- end }}
{{- if $v.dnsProviders.enabled }}
- --dnsproviders
{{- range include "zonestream.dnsProviderNamespaces" $root | fromJsonArray }}
- --dnsprovider-namespace={{ . }}
{{- end }}
{{- end }}
{{- end }}
{{- range $flag, $_ := include "zonestream.secretFlags" . | fromJson }}
- --{{ $flag }}-file=/etc/zonestream/secrets/{{ $flag }}
{{- end }}
{{- include "zonestream.extraArgs" (dict "root" $root "args" $v.extraArgs) }}
{{- if ne $s "allinone" }}
{{- include "zonestream.extraArgs" (dict "root" $root "args" (index $v $s).extraArgs) }}
{{- end }}
{{- end -}}

{{/* A zonestream pod template: root, stage (allinone or a stage). */}}
{{- define "zonestream.pod" -}}
{{- $root := .root -}}{{- $v := .root.Values -}}{{- $s := .stage -}}
{{- $cfg := ternary dict (index $v $s | default dict) (eq $s "allinone") -}}
{{- $secrets := include "zonestream.secretFlags" . | fromJson -}}
{{- $provider := include "zonestream.provider" $root -}}
{{- $p := include "zonestream.providerValues" $root | fromJson -}}
{{- $talksToProvider := has $s (list "allinone" "applier") -}}
{{- /* With registry crd the applier keeps ownership in DNSRecords; with
dnsProviders it watches DNSProviders and their Secrets. */ -}}
{{- $kube := or (has $s (list "allinone" "collector")) (and (eq $s "applier") (or (eq $v.registry "crd") $v.dnsProviders.enabled)) -}}
{{- $nats := and (ne $s "allinone") (ne $v.nats.credentials.type "none") -}}
metadata:
  labels:
    {{- include "zonestream.labels" $root | nindent 4 }}
    app.kubernetes.io/name: zonestream-{{ $s }}
    app.kubernetes.io/component: {{ $s }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if or $v.podAnnotations $v.secretConfiguration.enabled }}
  annotations:
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- if and $v.secretConfiguration.enabled $talksToProvider }}
    checksum/secret-configuration: {{ toJson $v.secretConfiguration.data | sha256sum }}
    {{- end }}
  {{- end }}
spec:
  {{- if $kube }}
  serviceAccountName: {{ include "zonestream.crdRegistryAccount" (dict "root" $root "stage" $s) }}
  automountServiceAccountToken: {{ $v.automountServiceAccountToken }}
  {{- else }}
  {{- if eq $s "applier" }}
  # The provider's cloud identity (IRSA, workload identity).
  serviceAccountName: {{ $v.applier.serviceAccountName | default (include "zonestream.serviceAccount" $root) }}
  {{- end }}
  # This stage does not talk to Kubernetes: no token in the pod.
  automountServiceAccountToken: false
  {{- end }}
  {{- with concat ($v.global.imagePullSecrets | default list) ($v.imagePullSecrets | default list) }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- if not (kindIs "invalid" $v.terminationGracePeriodSeconds) }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  {{- end }}
  {{- with $v.dnsPolicy }}
  dnsPolicy: {{ . }}
  {{- end }}
  {{- with $v.dnsConfig }}
  dnsConfig:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if $v.shareProcessNamespace }}
  shareProcessNamespace: true
  {{- end }}
  securityContext:
    {{- toYaml $v.podSecurityContext | nindent 4 }}
  {{- with $v.initContainers }}
  initContainers:
    {{- tpl (toYaml .) $root | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ ternary "zonestream" $s (eq $s "allinone") }}
      image: {{ include "zonestream.image" $root }}
      imagePullPolicy: {{ $v.image.pullPolicy }}
      args:
        {{- include "zonestream.args" . | trim | nindent 8 }}
      {{- with concat ($v.env | default list) ($cfg.env | default list) }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - {name: http, containerPort: 7979, protocol: TCP}
        {{- if and $v.portal.enabled (has $s (list "allinone" "portal")) }}
        - {name: web, containerPort: 8080, protocol: TCP}
        {{- end }}
      {{- with $v.livenessProbe }}
      livenessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.readinessProbe }}
      readinessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $v.securityContext | nindent 8 }}
      resources:
        {{- toYaml (ternary $v.resources $cfg.resources (eq $s "allinone")) | nindent 8 }}
      volumeMounts:
        {{- if eq $s "allinone" }}
        - {name: data, mountPath: /data}
        {{- end }}
        {{- if $nats }}
        - {name: nats, mountPath: /etc/zonestream/nats, readOnly: true}
        {{- end }}
        {{- if and (ne $s "allinone") $v.nats.tls.secret }}
        - {name: nats-tls, mountPath: /etc/zonestream/nats-tls, readOnly: true}
        {{- end }}
        {{- if $secrets }}
        - {name: secrets, mountPath: /etc/zonestream/secrets, readOnly: true}
        {{- end }}
        {{- if and $v.secretConfiguration.enabled $talksToProvider }}
        - name: secrets-configuration
          mountPath: {{ required "secretConfiguration.mountPath is needed" $v.secretConfiguration.mountPath }}
          {{- with $v.secretConfiguration.subPath }}
          subPath: {{ tpl . $root }}
          {{- end }}
          readOnly: true
        {{- end }}
        {{- with $v.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    {{- if and $talksToProvider (eq $provider "webhook") }}
    {{- $w := $p.webhook }}
    - name: webhook
      image: {{ required "provider.webhook.image.repository is needed" $w.image.repository }}:{{ required "provider.webhook.image.tag is needed" $w.image.tag }}
      imagePullPolicy: {{ $w.image.pullPolicy }}
      {{- with $w.env }}
      env:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $w.args }}
      args:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - {name: http-webhook, containerPort: {{ $w.service.port }}, protocol: TCP}
      {{- with $w.livenessProbe }}
      livenessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $w.readinessProbe }}
      readinessProbe:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $w.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $w.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $w.extraVolumeMounts }}
      volumeMounts:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
    {{- if $talksToProvider }}
    {{- with $v.extraContainers }}
    {{- tpl (toYaml .) $root | nindent 4 }}
    {{- end }}
    {{- end }}
  volumes:
    {{- if eq $s "allinone" }}
    - name: data
      {{- if $v.persistence.enabled }}
      persistentVolumeClaim:
        claimName: {{ $v.persistence.existingClaim | default (printf "%s-data" (include "zonestream.fullname" $root)) }}
      {{- else }}
      emptyDir: {}
      {{- end }}
    {{- end }}
    {{- if $nats }}
    - name: nats
      secret:
        {{- if eq $v.nats.credentials.type "password" }}
        secretName: {{ include "zonestream.fullname" $root }}-nats-users
        defaultMode: 0440
        items: [{key: {{ include "zonestream.identity" . }}, path: password}]
        {{- else }}
        secretName: {{ required (printf "nats.credentials.secrets.%s is needed" $s) (index $v.nats.credentials.secrets $s) }}
        defaultMode: 0440
        items: [{key: {{ $v.nats.credentials.type }}, path: {{ $v.nats.credentials.type }}}]
        {{- end }}
    {{- end }}
    {{- if and (ne $s "allinone") $v.nats.tls.secret }}
    - name: nats-tls
      secret: {secretName: {{ $v.nats.tls.secret }}, defaultMode: 0440}
    {{- end }}
    {{- if $secrets }}
    # Secrets from existing Secrets, one file per flag (--<flag>-file).
    - name: secrets
      projected:
        defaultMode: 0440
        sources:
          {{- range $flag, $ref := $secrets }}
          - secret:
              name: {{ required (printf "the Secret of %s needs a name" $flag) $ref.name }}
              items: [{key: {{ required (printf "the Secret of %s needs a key" $flag) $ref.key }}, path: {{ $flag }}}]
          {{- end }}
    {{- end }}
    {{- if and $v.secretConfiguration.enabled $talksToProvider }}
    - name: secrets-configuration
      secret:
        secretName: {{ include "zonestream.fullname" $root }}-secret
    {{- end }}
    {{- with $v.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* The service account of a stage that talks to Kubernetes: the
applier's own (its cloud identity) when it has one. root, stage. */}}
{{- define "zonestream.crdRegistryAccount" -}}
{{- $main := include "zonestream.serviceAccount" .root -}}
{{- if eq .stage "applier" -}}
{{- .root.Values.applier.serviceAccountName | default $main -}}
{{- else -}}
{{- $main -}}
{{- end -}}
{{- end -}}

{{/* The namespaces whose DNSProviders the applier serves: dnsProviders.namespaces,
else the release's with namespaced, else none (every namespace). */}}
{{- define "zonestream.dnsProviderNamespaces" -}}
{{- $ns := .Values.dnsProviders.namespaces | default list -}}
{{- if and (not $ns) .Values.namespaced -}}{{- $ns = list .Release.Namespace -}}{{- end -}}
{{- toJson $ns -}}
{{- end -}}
