"""Embedding providers: the local all-MiniLM-L6-v2 (onnxruntime), OpenAI-compatible, and a test hash."""
