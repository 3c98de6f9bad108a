"""Defaults and bounds that more than one layer relies on, defined once.

A layer that owns a limit's meaning reads it from here; the config schema, the
API's keyword defaults and the tool schemas all point at the same value.
"""

from __future__ import annotations

from typing import Final

# --- discovery (design rules: discovery and precedence) -------------------------------
MAX_DEPTH: Final = 6
"""Deepest folder level walked below a root."""
MAX_DIRS: Final = 2000
"""Most folders listed per root."""
MAX_SKILL_FILE_BYTES: Final = 8 * 1024 * 1024
"""A larger SKILL.md is reported (`file-too-large`), not read."""
MAX_MANIFEST_BYTES: Final = 1_000_000
"""A larger plugin manifest (`plugin.json`) is not read."""
MAX_CONFIG_BYTES: Final = 1024 * 1024
"""A larger config.toml is not read (`config-unreadable`): a project's config comes
with a cloned repo."""

# --- the skill file (design rules: the skill file) ------------------------------------
MAX_DESCRIPTION_CHARS: Final = 1024
"""The spec's limit on `description`: validation warns past it, the trigger lint
too."""

# --- YAML of strangers: bounded before and while it is parsed ---------
MAX_FRONTMATTER_CHARS: Final = 256 * 1024
"""Longer frontmatter (or Codex sidecar) is refused before any YAML parsing."""
MAX_YAML_NESTING: Final = 64
"""Deepest nesting of lists/mappings accepted; deeper text never reaches libyaml's
recursive composer (which overflows the C stack near 20,000 levels)."""
MAX_EXPANDED_CHARS: Final = 1024 * 1024
"""Budget for a YAML document once aliases are expanded (roughly its JSON size)."""
MAX_MERGED_KEYS: Final = 10_000
"""Most key/value pairs YAML merge keys (`<<: *a`) may copy into one document: a
chain of merges doubles at each link."""
MAX_YAML_INT_CHARS: Final = 256
"""A longer integer scalar stays the text it was written as: no huge int is built,
and every int kept prints in decimal under any `sys.set_int_max_str_digits`."""

# --- bundled files (design rules: safety) ---------------------------------------------
MAX_LISTED_FILES: Final = 200
"""Most files of a skill listed in an injection or a tool result."""
MAX_READ_FILE_BYTES: Final = 1_000_000
"""Largest bundled file `skill_read_file` returns."""
MAX_PATH_CHARS: Final = 4096
"""Longest path (a bundled file's, a SKILL.md's) a reader or tool accepts: a path is
resolved component by component, which costs time with its length."""

# --- the catalog budget (design rules: rendering) -------------------------------------
BUDGET_FRACTION: Final = 0.02
"""Share of the model's context window for the catalog."""
BUDGET_CHARS: Final = 16_000
"""Catalog budget in characters when the context window is unknown."""

# --- search and tools (design rules: tools and errors) --------------------------------
SEARCH_LIMIT: Final = 8
"""Results a search returns unless asked for another number."""
SEARCH_MAX_LIMIT: Final = 50
"""Most results one search may return."""
NAME_ENUM_MAX: Final = 64
"""Tool `name` parameters list at most this many ids as an enum."""

# --- skills the model writes -------------------------------------------
MAX_CREATED_SKILL_BYTES: Final = 64 * 1024
"""Largest SKILL.md that `skill_create` / `skillpack new` writes (strict validation also
caps the body at 500 lines and about 5,000 tokens)."""

# --- skills served over MCP (the skills extension's per-skill limits) ------------
MCP_SKILL_MAX_FILES: Final = 512
"""Most files one skill may list over MCP; hosts must accept skills up to it."""
MCP_SKILL_MAX_BYTES: Final = 16 * 1024 * 1024
"""Most bytes one skill's files may add up to over MCP (and the cap of one read)."""

# --- what a model may send: every argument and result is bounded -------
MAX_ARG_DEPTH: Final = 32
"""Deepest nesting of arrays and objects in a tool call's arguments (the tools take
flat values; a model's 1,000-deep array once overflowed the JSON parser's stack)."""
MAX_FRAME_DEPTH: Final = 64
"""Nesting a server keeps of a request it parses: deeper parts are cut to `[]` before
any parser recurses into them (`runtime._tool_args.clip_nesting`), which leaves the
arguments still over `MAX_ARG_DEPTH`, so the tool's own check refuses them."""
MAX_QUERY_CHARS: Final = 4096
"""Longest `skill_search` query (about 600 words; a query costs time per word)."""
MAX_REF_CHARS: Final = 4096
"""Longest skill reference: a name, a qualified id or a SKILL.md path."""
MAX_ARGS_CHARS: Final = 64 * 1024
"""Longest `args` string given to a skill."""
MAX_EXPANSION_CHARS: Final = 1024 * 1024
"""Most characters substitution may add to a body: `$ARGUMENTS` written a thousand
times in a body would otherwise multiply the arguments a thousandfold."""
MAX_DIAGNOSTICS: Final = 20
"""Most diagnostics one message gets; one more says how many were left out."""

# --- turn-time suggestions ----------------------------------------------
SUGGESTIONS: Final = 3
"""Skills a turn suggests at most unless `[search] suggestions` says otherwise."""
MAX_SUGGESTIONS: Final = 10
"""Most suggestions a turn may be configured to make."""
