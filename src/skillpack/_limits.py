"""Defaults and bounds that more than one layer relies on, defined once.

A layer that owns a limit's meaning reads it from here; the config schema, the
API's keyword defaults and the tool schemas all point at the same value.
"""

from __future__ import annotations

from typing import Final

# --- discovery (DESIGN §3) ------------------------------------------------------
MAX_DEPTH: Final = 6
"""Deepest folder level walked below a root."""
MAX_DIRS: Final = 2000
"""Most folders listed per root."""
MAX_SKILL_FILE_BYTES: Final = 8 * 1024 * 1024
"""A larger SKILL.md is reported (`file-too-large`), not read."""
MAX_MANIFEST_BYTES: Final = 1_000_000
"""A larger plugin manifest (`plugin.json`) is not read."""

# --- the skill file (DESIGN §2) ------------------------------------------------
MAX_DESCRIPTION_CHARS: Final = 1024
"""The spec's limit on `description`: validation warns past it, the trigger lint
too."""

# --- bundled files (DESIGN §7) --------------------------------------------------
MAX_LISTED_FILES: Final = 200
"""Most files of a skill listed in an injection or a tool result."""
MAX_READ_FILE_BYTES: Final = 1_000_000
"""Largest bundled file `skill_read_file` returns."""

# --- the catalog budget (DESIGN §5) ---------------------------------------------
BUDGET_FRACTION: Final = 0.02
"""Share of the model's context window for the catalog."""
BUDGET_CHARS: Final = 16_000
"""Catalog budget in characters when the context window is unknown."""

# --- search and tools (DESIGN §6) -----------------------------------------------
SEARCH_LIMIT: Final = 8
"""Results a search returns unless asked for another number."""
SEARCH_MAX_LIMIT: Final = 50
"""Most results one search may return."""
NAME_ENUM_MAX: Final = 64
"""Tool `name` parameters list at most this many ids as an enum."""

# --- skills the model writes (issue 12) -------------------------------------------
MAX_CREATED_SKILL_BYTES: Final = 64 * 1024
"""Largest SKILL.md that `skill_create` / `skillpack new` writes (strict validation also
caps the body at 500 lines and about 5,000 tokens)."""

# --- skills served over MCP (the skills extension's per-skill limits) ------------
MCP_SKILL_MAX_FILES: Final = 512
"""Most files one skill may list over MCP; hosts must accept skills up to it."""
MCP_SKILL_MAX_BYTES: Final = 16 * 1024 * 1024
"""Most bytes one skill's files may add up to over MCP (and the cap of one read)."""
