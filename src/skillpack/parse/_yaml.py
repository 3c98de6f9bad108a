"""YAML for SKILL.md frontmatter and Codex sidecars: the safe loader, one retry, error text.

Pure. `load_yaml` reads the subset `_fastyaml.load_simple` is sure about without
PyYAML; anything else goes to libyaml's `CSafeLoader` with the YAML 1.2 core schema's
scalar rules (`_yaml12.add_core_resolvers`, as Codex and Claude Code read
frontmatter), built (and PyYAML imported) on first use, so a warm run and `import
skillpack` never import `yaml`. When the loader refuses a frontmatter,
`quote_colon_values` gives the one rewrite worth retrying, and
`yaml_error_text`/`yaml_fix` say where it failed and how to fix it.

The text is a stranger's, so its structure is bounded before values are built:
nesting past `MAX_NESTING` is refused before libyaml composes it (its
composer recurses in C and overflows the stack near 20,000 levels; its scanner is
quadratic in the nesting), merge keys may copy at most `MAX_MERGED_KEYS` pairs (a
chain of `<<: [*a, *a]` doubles at each link), and an integer longer than
`MAX_YAML_INT_CHARS` stays its text (Python refuses to print ints past 4,300 digits).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from .._limits import MAX_MERGED_KEYS, MAX_YAML_INT_CHARS
from .._limits import MAX_YAML_NESTING as MAX_NESTING
from . import _yaml12 as core
from ._fastyaml import load_simple
from ._json_safe import TooLarge
from ._yaml12 import add_core_resolvers, core_bool, core_float, core_int

# Characters that start a YAML node: a value beginning with one is not a plain scalar,
# so quoting it as a block scalar would change its meaning.
_YAML_INDICATORS: Final = frozenset("\"'|>[{&*!#%@`")
_RETRY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:[ \t]+(.*?)[ \t]*")
# A block collection indicator: `-`, `?` or `:` followed by a blank, a line break
# (YAML 1.1's NEL, LS, PS too) or the end. Every nesting level of a document needs
# one of these or a `[`/`{`, so their count bounds its depth.
_BLOCK_INDICATOR = re.compile("[-?:](?![^\\s\x85\u2028\u2029])")


@functools.cache
def _yaml_loader() -> Any:
    """libyaml's safe loader when present (the performance floor is measured with it),
    typing plain scalars by the YAML 1.2 core schema.

    Safe semantics either way: no python/* tags, no object construction. Plain
    scalars resolve as Codex, Claude Code and every YAML 1.2 parser read them
    (`_yaml12.add_core_resolvers`): `yes`/`no`/`on`/`off` and `2024-01-02` are text,
    `017` is 17, `1_000` and `1:20` are text. What stays skillpack's own: `<<` merge
    keys merge (the rule of `_flatten_merges`, which counts every pair copied against
    `MAX_MERGED_KEYS`), an integer longer than `MAX_YAML_INT_CHARS` stays text,
    `.inf`/`.nan` are floats, and explicit tags (`!!bool`, `!!timestamp`, ...)
    construct as PyYAML's safe loader does, except that a tagged date that is not a
    real date stays text. Built on first use: plain frontmatter never needs PyYAML,
    so it is not imported for it.
    """
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc]
        merged_keys = 0

        def construct_yaml_timestamp(self, node: Any) -> Any:
            try:
                return super().construct_yaml_timestamp(node)
            except ValueError:
                return self.construct_scalar(node)

        def flatten_mapping(self, node: Any) -> None:
            _flatten_merges(self, node)

    def construct_int(loader: Any, node: Any) -> Any:
        text: str = loader.construct_scalar(node)
        return text if len(text) > MAX_YAML_INT_CHARS else core_int(text)

    def construct_float(loader: Any, node: Any) -> float:
        return core_float(loader.construct_scalar(node))

    def construct_bool(loader: Any, node: Any) -> bool:
        return core_bool(loader.construct_scalar(node))

    def construct_null(loader: Any, node: Any) -> None:
        loader.construct_scalar(node)

    add_core_resolvers(Loader)
    Loader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])
    Loader.add_constructor(core.NULL, construct_null)
    Loader.add_constructor(core.BOOL, construct_bool)
    Loader.add_constructor(core.INT, construct_int)
    Loader.add_constructor(core.FLOAT, construct_float)
    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_timestamp)
    return Loader


def _flatten_merges(loader: Any, node: Any) -> None:
    """Apply the `<<` merge keys of mapping `node`, counting every pair copied.

    skillpack's own merge rule rather than PyYAML's: PyYAML 6.0.4 changed both which
    pairs a merge copies and which mapping wins a key given twice, so the values and
    the guard would depend on the release pip picked. Here, as the merge-key type
    describes: the mapping's own keys win, then the merged mappings in list order;
    each pair a merge copies counts against `MAX_MERGED_KEYS` (a chain of
    `<<: [*a, *a]` doubles at each link and is refused before it is copied).

    Raises:
        TooLarge: ("merges") the document's merges copy more than the bound.
        yaml.constructor.ConstructorError: a merge value is not a mapping or a
            list of mappings.
    """
    from yaml.constructor import ConstructorError
    from yaml.nodes import MappingNode, SequenceNode

    merged: list[Any] = []
    own: list[Any] = []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"a merge key takes a mapping or a list of mappings, not {source.id}",
                        source.start_mark,
                    )
                _flatten_merges(loader, source)
                loader.merged_keys += len(source.value)
                if loader.merged_keys > MAX_MERGED_KEYS:
                    raise TooLarge("merges")
                merged.append(source.value)
            continue
        if key_node.tag == "tag:yaml.org,2002:value":
            key_node.tag = "tag:yaml.org,2002:str"
        own.append((key_node, value_node))
    if merged:
        # Constructing keeps the last of equal keys: the earliest source goes last.
        node.value = [pair for pairs in reversed(merged) for pair in pairs] + own


@functools.cache
def yaml_errors() -> tuple[type[BaseException], ...]:
    """What `load_yaml` raises for a text it cannot read (imports PyYAML: call it only
    in an `except` clause, which evaluates it only when something was raised)."""
    import yaml

    return (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError)


def check_nesting(source: str) -> None:
    """Refuse YAML nested deeper than `MAX_NESTING` before it is composed.

    Every level needs a `[`, a `{` or a block indicator, so text with at most
    `MAX_NESTING` of them (nearly every frontmatter) needs no look. Otherwise
    libyaml's parser (iterative, unlike its composer) streams the events and the
    look stops at the first level past the limit: before that the scanner has read
    about a line ahead, so even 256 KiB of `[` costs well under a millisecond.

    Raises:
        TooLarge: ("nesting") the text nests deeper.
        One of `yaml_errors()`: the text is not YAML (found before the depth was).
    """
    bound = source.count("[") + source.count("{")
    if bound <= MAX_NESTING:
        bound += len(_BLOCK_INDICATOR.findall(source))
        if bound <= MAX_NESTING:
            return
    import yaml

    depth = 0
    # PyYAML's pure-Python parser, never libyaml: libyaml's own depth limit (added in
    # PyYAML 6.0.4) fires before this one for some shapes, so the verdict would depend
    # on the release. The Python scanner reads about a line ahead and is the same code
    # in every release the package accepts.
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise TooLarge("nesting")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def normalize(text: str) -> str:
    """`text` without a leading BOM and with LF line endings, as the readers expect."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # A CRLF file shows it on its first line; checking there spares a scan of the
    # whole body. A stray CR elsewhere is tolerated by the split and by YAML.
    nl = text.find("\n")
    if nl > 0 and text[nl - 1] == "\r":
        text = text.replace("\r\n", "\n")
    return text


def load_yaml(source: str, plain: dict[str, str] | None = None) -> Any:
    """The value of a YAML document, read safely with YAML 1.2 core-schema scalars.

    Args:
        source: The YAML text.
        plain: When given, cleared and then filled with the source text of each
            top-level value written as a plain scalar, by its (text) key: `1.10` for
            the float 1.1, `True` for the boolean, `off` for the text. Fields that
            expect text take that text, and hints quote what the author wrote.

    Raises:
        One of `yaml_errors()`: the text is not YAML the safe loader accepts.
        TooLarge: it nests past `MAX_NESTING` or its merge keys copy too much
            (its aliases are bounded where values are copied: `json_safe`).
    """
    # Most frontmatter is inside the subset `load_simple` reads (same result, a
    # fraction of the cost); everything else goes to the safe YAML loader.
    data = load_simple(source, plain)
    if data is not None:
        return data
    return load_with_libyaml(source, plain)


def load_with_libyaml(source: str, plain: dict[str, str] | None = None) -> Any:
    """`load_yaml` without the fast path: what `load_simple` must equal (its tests)."""
    if plain is not None:
        plain.clear()
    check_nesting(source)
    loader = _yaml_loader()(source)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if plain is not None:
            _plain_texts(node, plain)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _plain_texts(node: Any, plain: dict[str, str]) -> None:
    """Fill `plain` from a composed document (see `load_yaml`): the mapping's own
    pairs in order, so the last of a repeated key decides, as constructing does."""
    from yaml.nodes import MappingNode, ScalarNode

    if not isinstance(node, MappingNode):
        return
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != core.STR:
            continue
        # A plain scalar's style is None (PyYAML) or "" (libyaml).
        if isinstance(value_node, ScalarNode) and not value_node.style:
            plain[key_node.value] = value_node.value
        else:
            plain.pop(key_node.value, None)


def quote_colon_values(source: str) -> tuple[str, list[str]]:
    """Rewrite top-level `key: a: b` values as block scalars; return the fields changed.

    Agents write `description: Use when: x` unquoted; YAML refuses the second `: `.
    A plain value's continuation lines (indented) are folded into it, as YAML would,
    and a `: ` on one of them counts too.
    """
    lines = source.split("\n")
    out: list[str] = []
    fields: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        match = _RETRY_LINE.fullmatch(line)
        if match is None:
            out.append(line)
            continue
        key, value = match.groups()
        if not value or value[0] in _YAML_INDICATORS:
            out.append(line)
            continue
        parts = [value]
        end = i
        while end < n and lines[end][:1] in (" ", "\t") and lines[end].strip():
            parts.append(lines[end].strip())
            end += 1
        joined = " ".join(parts)
        if not (": " in joined or ":\t" in joined or joined.endswith(":")):
            out.append(line)
            continue
        out.append(f"{key}: |-")
        out.append("  " + joined)
        fields.append(key)
        i = end
    return "\n".join(out), fields


def yaml_error_text(exc: BaseException, first_line: int) -> tuple[str, int | None]:
    """(where + what, file line) of a YAML failure; `first_line` is the file line of
    the document's first line."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    if isinstance(exc, RecursionError):
        problem = "nesting is too deep"
    if not problem:
        problem = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if mark is None:
        return f": {problem}", None
    line = first_line + int(mark.line)
    return f" at line {line}, column {int(mark.column) + 1}: {problem}", line


def yaml_fix(problem: str, source: str) -> str:
    """How to fix the YAML failure `problem` (from `yaml_error_text`) in `source`."""
    if "\t" in source and ("token" in problem or "tab" in problem):
        return "Indent with spaces: YAML does not allow tabs for indentation."
    if "constructor for the tag" in problem:
        return (
            "Remove the tag: frontmatter is plain YAML, and tags such as !!python/object "
            "or custom !tags are refused."
        )
    if "must be in" in problem or "day is out of range" in problem:
        return 'Quote values that look like dates but are not (e.g. "2024-13-01").'
    return (
        "Quote values that contain ': ' or start with a YAML indicator "
        '([ { & * ! | > @ `), e.g. description: "Use when: ...".'
    )
