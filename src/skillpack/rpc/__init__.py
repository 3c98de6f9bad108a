"""Surface: the `skillpack serve` JSON-RPC app server and its typed client.
Imports runtime and below; nothing imports it but the CLI.
"""
