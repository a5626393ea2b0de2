"""Durable, keyed record transport between pipeline stages."""
