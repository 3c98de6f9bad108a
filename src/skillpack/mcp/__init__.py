"""Surface: `skillpack mcp`, an MCP server over one live `Session` (the `mcp` extra).

`_server` (tools, resources, prompts, the skills extension), `_served` (what one catalog
serves), `_uris` (the `skill://` scheme), `_errors` (JSON-RPC errors, one place), `_http`
(streamable HTTP behind Host/Origin/token checks), `_extra` (the extra's check).
Imports runtime and below; nothing imports it but the CLI.
"""
