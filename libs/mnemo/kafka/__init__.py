"""The Kafka transport of the distributed mode: channels' topics, the gateway's transport, the
faust runtime and handler the stage services run on, and the DLQ / replay operations behind
`mnemo dlq` and `mnemo replay`."""
