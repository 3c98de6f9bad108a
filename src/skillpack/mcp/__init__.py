"""Surface: the `skillpack mcp` server (official `mcp` SDK, an optional extra).
Imports runtime and below; nothing imports it but the CLI.
"""
