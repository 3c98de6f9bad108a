"""PURE. Text in, values out: the frontmatter split, YAML (safe loader and its fast
path), typed fields, Codex metadata, validation. Imports only the base modules.
"""
