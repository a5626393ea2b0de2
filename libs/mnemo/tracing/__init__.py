"""OpenTelemetry tracing, optional: one trace per run, from the gateway through the bus or
Kafka to each step, LLM call and commit. Off (every span a no-op) unless an entry point
calls `mnemo.tracing.setup.configure` and the standard `OTEL_*` variables ask for it."""
