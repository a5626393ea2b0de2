"""mnemo as an MCP server: one set of tools and resources, two transports.

- Streamable HTTP, mounted on the gateway at `/mcp` behind the API keys (`mnemo.mcp.http`):
  the tools call the Engine facade the REST routes call, for the key's project.
- stdio, as `mnemo mcp` (`mnemo.mcp.stdio`): the same tools, proxied to a running mnemo over
  HTTP with `mnemo.client`, for MCP clients that launch a command.

Built on the official `mcp` SDK 2.x (`MCPServer`).
"""
