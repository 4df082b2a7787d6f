{{- define "zonestream.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "zonestream.labels" -}}
app.kubernetes.io/part-of: zonestream
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "zonestream.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "zonestream.serviceAccount" -}}
{{- if .Values.serviceAccount.create -}}{{ .Values.serviceAccount.name | default (printf "%s-collector" (include "zonestream.fullname" .)) }}{{- else -}}{{ .Values.serviceAccount.name | default "default" }}{{- end -}}
{{- end -}}

{{/* The bus' URL: the bundled NATS' Service, or nats.url. */}}
{{- define "zonestream.natsURL" -}}
{{- if .Values.nats.bundled -}}nats://{{ include "zonestream.fullname" . }}-nats:4222{{- else -}}{{ required "nats.url is needed when nats.bundled is false" .Values.nats.url }}{{- end -}}
{{- end -}}

{{/* The identity a stage has on the bus (zonestream nats-config). */}}
{{- define "zonestream.identity" -}}
{{- $stage := .stage -}}{{- $v := .root.Values -}}
{{- if eq $stage "collector" -}}collector-{{ $v.clusterName }}{{- else if eq $stage "applier" -}}applier-{{ $v.provider.name }}{{- else -}}{{ $stage }}{{- end -}}
{{- end -}}

{{/* The flags every stage takes: the bus, its credentials, logging. */}}
{{- define "zonestream.busArgs" -}}
{{- $v := .root.Values -}}
- --nats-url={{ include "zonestream.natsURL" .root }}
{{- $type := $v.nats.credentials.type }}
{{- if eq $type "nkey" }}
- --nats-nkey=/etc/zonestream/nats/nkey
{{- else if eq $type "creds" }}
- --nats-creds=/etc/zonestream/nats/creds
{{- else if ne $type "none" }}
{{- fail (printf "nats.credentials.type %q: want nkey, creds or none" $type) }}
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
- --log-level={{ $v.logLevel }}
- --log-format={{ $v.logFormat }}
{{- end -}}
