"""Embedding providers: the local bge-small-en-v1.5 (onnxruntime), OpenAI-compatible, and a test hash."""
