"""The HTTP gateway as served: the Engram API with the console and MCP mounted on it."""
