"""Observability shared by both modes: metrics from every process, the pipeline's backlog
and the Prometheus exposition (tracing lives in `mnemo.tracing`)."""
