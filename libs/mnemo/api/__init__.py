"""The HTTP routes speaking the Engram v1 REST API.

The app that serves them, with the console and MCP mounted, is `mnemo.gateway.app.create_app`;
this package stays importable without FastAPI for `mnemo.api.schemas` (pure pydantic), which
the client shares.
"""
