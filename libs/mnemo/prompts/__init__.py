"""Prompts are code: one module per LLM task with its context, response model and messages()."""
