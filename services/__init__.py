"""Process shells: the gateway and the four Kafka stage services (extractor, buffer,
transformer, committer). No service imports another; they share `mnemo` only."""
