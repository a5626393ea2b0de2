"""The pipeline core both transports import: the Engine facade, group cache, admission,
the run record, buffering rules, failure classification and step dispatch. No I/O beyond
the store and the provider protocols; the embedded bus (`mnemo.embedded`) and Kafka
(`mnemo.kafka`) are the transports."""
