"""Surface: the `skillpack ui` picker (Textual, an optional extra).
Imports runtime and below; nothing imports it but the CLI.
"""
