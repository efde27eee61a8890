{{- define "bulwark.name" -}}{{ .Release.Name }}{{- end -}}

{{- define "bulwark.labels" -}}
app.kubernetes.io/name: bulwark
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "bulwark.selector" -}}
app.kubernetes.io/name: bulwark
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "bulwark.redisURL" -}}
{{- if .Values.redisURL -}}{{ .Values.redisURL }}{{- else -}}redis://{{ include "bulwark.name" . }}-redis:6379/0{{- end -}}
{{- end -}}

{{/* The hardening the image has: a non-root user, a read-only root
filesystem, no capabilities, no privilege escalation, the runtime's
seccomp profile. */}}
{{- define "bulwark.containerSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}
