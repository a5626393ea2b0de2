"""The embedded engine: durable adds, ordered pipeline workers, and the facade APIs call."""
