"""The distributed mode's Kafka plumbing: settings, topics, the faust service shell, the
gateway's run submitter, and the DLQ / replay operations behind `mnemo dlq` and `mnemo replay`."""
