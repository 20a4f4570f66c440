{{/* Chart name, at most 63 characters. */}}
{{- define "model-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified name: the release name, with the chart's unless it already contains it. */}}
{{- define "model-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "model-gateway.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "model-gateway.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "model-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "model-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The gateway pods (not the migration Job's): Deployment, Service and PodDisruptionBudget select these. */}}
{{- define "model-gateway.podSelectorLabels" -}}
{{ include "model-gateway.selectorLabels" . }}
app.kubernetes.io/component: gateway
{{- end }}

{{- define "model-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "model-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "model-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "model-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "model-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding the database URL, keys and provider credentials. */}}
{{- define "model-gateway.secretName" -}}
{{- if .Values.secrets.existingSecret }}
{{- .Values.secrets.existingSecret }}
{{- else if .Values.secrets.create }}
{{- include "model-gateway.fullname" . }}
{{- else }}
{{- required "set secrets.existingSecret (a Secret holding at least the database URL) or secrets.create with secrets.values" "" }}
{{- end }}
{{- end }}

{{/* Environment shared by the gateway container, the migration Job and the init container (the config file is the
gateway container's only: the Job runs before the release's ConfigMap exists, and migrating needs only the URL). */}}
{{- define "model-gateway.env" -}}
- name: GATEWAY_MIGRATE
  value: {{ if eq .Values.migrations.mode "auto" }}"auto"{{ else }}"off"{{ end }}
- name: GATEWAY_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" . }}
      key: {{ .Values.secrets.keys.databaseUrl }}
- name: GATEWAY_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" . }}
      key: {{ .Values.secrets.keys.redisUrl }}
      optional: true
- name: GATEWAY_ADMIN_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" . }}
      key: {{ .Values.secrets.keys.adminKey }}
      optional: true
- name: GATEWAY_WEBHOOK_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" . }}
      key: {{ .Values.secrets.keys.webhookSecret }}
      optional: true
- name: GATEWAY_WEB_SEARCH_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" . }}
      key: {{ .Values.secrets.keys.webSearchApiKey }}
      optional: true
{{- range $name, $key := .Values.providerKeys }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "model-gateway.secretName" $ }}
      key: {{ $key }}
      optional: true
{{- end }}
{{- range $name, $ref := .Values.extraSecretEnv }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.secret }}
      key: {{ $ref.key }}
{{- end }}
{{- range $name, $value := .Values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end }}
