"""OAuth 2.1 for MCP clients (issue 40): mnemo as a resource server (Protected Resource
Metadata, RFC 9728; JWTs of an external issuer checked for this resource, RFC 8707) and a
small built-in authorization server for self-hosters (the mcp SDK's handlers over
`BuiltinProvider`, with a consent page in the console)."""
