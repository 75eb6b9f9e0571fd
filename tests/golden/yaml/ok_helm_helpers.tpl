{{/*
Rebuilt from sgl-project/sglang lws_pd_helm/.../templates/_helpers.tpl (corpus record 43):
`define` blocks that emit list items, values from Go templates, boolean flags behind
conditionals, Kubernetes $(VAR) references. Not YAML until Helm renders it.
*/}}
{{- define "sglang.prefill.command" -}}
- python3
- -m
- sglang.launch_server
- --port
- {{ .Values.prefill.config.port | quote }}
- --host
- {{ .Values.prefill.config.host | quote }}
- --model-path
- {{ .Values.global.model.path }}
- --disaggregation-ib-device
- {{ .Values.global.rdma.ibDevice }}
- --chunked-prefill-size
- {{ .Values.prefill.config.chunkedPrefillSize | quote }}
- --page-size
- {{ .Values.prefill.config.pageSize | quote }}
{{- if .Values.prefill.config.enableDpLmHead }}
- --enable-dp-lm-head
{{- end }}
- --dp-size
- {{ .Values.prefill.config.dpSize | quote }}
- --disable-radix-cache
- --moe-a2a-backend
- {{ .Values.prefill.config.moeA2aBackend }}
- --disaggregation-mode
- {{ .Values.prefill.config.disaggregationMode }}
- --mem-fraction-static
- {{ .Values.prefill.config.memFractionStatic | quote }}
- --tp-size
- {{ .Values.prefill.config.tp | quote }}
- --dist-init-addr
- $(LWS_LEADER_ADDRESS):{{ .Values.global.distInit.port }}
- --nnodes
- $(LWS_GROUP_SIZE)
- --node-rank
- $(LWS_WORKER_INDEX)
- --trust-remote-code
{{- range .Values.prefill.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{- define "sglang.decode.command" -}}
- python3
- -m
- sglang.launch_server
- --model-path
- {{ .Values.global.model.path }}
- --disaggregation-mode
- decode
- --max-running-requests
- {{ .Values.decode.config.maxRunningRequests | quote }}
{{- end }}
