"""Language-model providers: one OpenAI-compatible client and an offline fallback."""
