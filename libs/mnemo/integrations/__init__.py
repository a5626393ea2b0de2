"""mnemo as memory for agent frameworks: remember/recall tools for LangChain/LangGraph, the
OpenAI Agents SDK and Pydantic AI, and a LangGraph `BaseStore` backed by mnemo.

Each adapter module imports its framework, so install the extra first:
`pip install 'mnemo[agents]'`. The shared logic is `mnemo.integrations.memory_tools`.
"""
