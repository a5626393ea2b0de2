"""Embedding providers: a local sentence-transformers model, OpenAI-compatible, and a test hash."""
