"""The provider contracts (LLM, embedder) that steps, prompts and providers share."""
