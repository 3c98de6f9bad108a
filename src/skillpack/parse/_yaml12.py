"""A frontmatter's values as a YAML 1.2 parser reads them (the core schema), as JSON.

Pure. The MCP skills extension lists each skill's frontmatter "verbatim as JSON", and
hosts check it field by field against what *their* parser reads from the served
SKILL.md: a YAML 1.2 parser (the MCP Inspector uses the JavaScript `yaml` package).
PyYAML is a YAML 1.1 loader, and the two schemas disagree on plain scalars:
`yes`/`no`/`on`/`off` are booleans in 1.1 and text in 1.2, `2024-01-02` is a date in
1.1 and text in 1.2, `017` is octal 15 in 1.1 and decimal 17 in 1.2, `0o17` is text in
1.1 and 15 in 1.2, `1_000` and `1:20` are numbers in 1.1 and text in 1.2, and `<<`
merges mappings in 1.1 only. The 1.2 rules live here once (`add_core_resolvers`,
`core_int`, ...): skillpack's frontmatter loader (`_yaml.load_yaml`) types scalars
with them too, keeping only its own `<<` merges.

`frontmatter_json` parses with PyYAML's syntax reader (libyaml when present) but
resolves and constructs values by the YAML 1.2 core schema. Where the two parsers'
*syntax* could disagree, or a value has no JSON form, it refuses (`Yaml12Error`)
rather than guess: a duplicate key (an error in YAML 1.2), an explicit tag other
than `!!str`/`!!seq`/`!!map`, a key that is a collection or a float, `.inf`/`.nan`,
and the characters U+0085, U+2028 and U+2029 (line breaks in 1.1, text in 1.2). A
caller that gets `Yaml12Error` leaves the skill out of what needs the exact values
(the MCP listing) instead of publishing values a host would read differently. The
differential test (`tests/parse/test_yaml12.py`) pins the result on the real corpus
and on the cases above against the values the YAML 1.2 specification gives.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from ._json_safe import MAX_EXPANDED_CHARS, Budget, TooLarge, json_safe

_LINE_BREAKS_11: Final = ("\x85", "\u2028", "\u2029")
"""Line breaks in YAML 1.1 only: PyYAML would split a scalar where YAML 1.2 keeps text."""

STR: Final = "tag:yaml.org,2002:str"
SEQ: Final = "tag:yaml.org,2002:seq"
MAP: Final = "tag:yaml.org,2002:map"
# Plain scalars resolve to tags of our own, so an explicit `!!int`, `!!bool`, ... (which
# YAML 1.2 parsers treat in their own ways) never reaches these constructors.
NULL: Final = "tag:skillpack,2025:core-null"
BOOL: Final = "tag:skillpack,2025:core-bool"
INT: Final = "tag:skillpack,2025:core-int"
FLOAT: Final = "tag:skillpack,2025:core-float"

# The YAML 1.2 core schema's plain-scalar rules (spec 1.2.2, section 10.3.2).
_CORE: Final[tuple[tuple[str, str, str], ...]] = (
    (NULL, r"^(?:~|null|Null|NULL|)$", "~nN"),
    (BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (INT, r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        FLOAT,
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
)
MAX_ALIASES: Final = 100
"""More alias uses than this and the JavaScript `yaml` package refuses the document."""
_MAX_SAFE_KEY: Final = 2**53
"""An integer key beyond this prints differently once a JavaScript host reads it."""


class Yaml12Error(ValueError):
    """The frontmatter cannot be given as the JSON a YAML 1.2 parser would read."""


def frontmatter_json(text: str) -> dict[str, Any]:
    """The frontmatter `text` (between the `---` lines) read by the YAML 1.2 core schema.

    Returns:
        The mapping as JSON values: strings, numbers, booleans, None, lists, dicts
        with string keys. Empty frontmatter is `{}`.

    Raises:
        Yaml12Error: not YAML, not a mapping, or not representable exactly (see
            the module docstring); the message says which.
    """
    for char in _LINE_BREAKS_11:
        if char in text:
            raise Yaml12Error(
                f"the frontmatter holds U+{ord(char):04X}, a line break in YAML 1.1 but text "
                "in YAML 1.2, so the two readings differ; replace it with a space or newline"
            )
    import yaml

    try:
        value = yaml.load(text, Loader=_loader())  # noqa: S506 - the loader is safe
    except Yaml12Error:
        raise
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Yaml12Error(f"the frontmatter is not YAML this reader accepts: {first}") from exc
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Yaml12Error("the frontmatter is not a mapping of fields")
    if "*" in text or "!" in text:
        _check_events(text)
    try:
        copied: dict[str, Any] = json_safe(value, Budget(MAX_EXPANDED_CHARS), 0)
    except TooLarge as exc:
        raise Yaml12Error(
            "the frontmatter nests too deeply or expands too much through aliases "
            f"({exc.reason}); simplify it"
        ) from exc
    return copied


def _check_events(text: str) -> None:
    """Refuse what only the event stream shows: the non-specific tag `!` (text in YAML
    1.2, resolved as plain by PyYAML) and more aliases than hosts accept."""
    import yaml

    aliases = 0
    for event in yaml.parse(text, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
        elif getattr(event, "tag", None) == "!":
            line = event.start_mark.line + 1 if event.start_mark is not None else "?"
            raise Yaml12Error(
                f"the non-specific tag '!' (line {line}) is read "
                "differently by YAML 1.1 and 1.2 parsers; remove it or quote the value"
            )
    if aliases > MAX_ALIASES:
        raise Yaml12Error(
            f"the frontmatter uses YAML aliases more than {MAX_ALIASES} times, which YAML 1.2 "
            "hosts refuse as an expansion attack; write the values out"
        )


def _json_key(key: Any) -> str:
    """A mapping key as a JavaScript object key (what a YAML 1.2 host makes of it)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return ""
    if isinstance(key, int) and abs(key) < _MAX_SAFE_KEY:
        return str(key)
    raise Yaml12Error(
        f"the frontmatter has a key {key!r} that a YAML 1.2 host turns into text its own "
        "way; quote the key"
    )


def add_core_resolvers(resolver: Any) -> None:
    """Make PyYAML resolver class `resolver` type plain scalars by the YAML 1.2 core
    schema and nothing else: null, bool, int and float get the `NULL`/`BOOL`/`INT`/
    `FLOAT` tags (construct them with `core_bool`, `core_int`, `core_float`), every
    other plain scalar is text. Quoted and block scalars are text, as in every schema.

    The one home of these rules: the MCP listing's exact reader (`frontmatter_json`)
    and the frontmatter loader (`_yaml.load_yaml`) both use them.
    """
    resolver.yaml_implicit_resolvers = {}
    for tag, pattern, first in _CORE:
        resolver.add_implicit_resolver(tag, re.compile(pattern), list(first) + [""])


def core_int(text: str) -> int:
    """The value of a plain scalar the core schema resolves as an integer."""
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def core_float(text: str) -> float:
    """The value of a plain scalar the core schema resolves as a float (`.inf`, `.nan`
    included: the caller decides whether a non-finite value is acceptable)."""
    if text.lstrip("+-").startswith("."):
        word = text.lstrip("+-.").lower()
        if word in ("inf", "nan"):
            return float(text.replace(".", "", 1))
    return float(text)


def core_bool(text: str) -> bool:
    """The value of a plain scalar the core schema resolves as a boolean."""
    return text.lower() == "true"


@functools.cache
def _loader() -> Any:
    """A PyYAML loader class: libyaml's syntax reader, YAML 1.2 core resolution."""
    import yaml
    from yaml.constructor import ConstructorError, SafeConstructor
    from yaml.resolver import BaseResolver

    # PyYAML's class hierarchy is typed loosely; these classes are used as Any.
    base_resolver: Any = BaseResolver
    base_constructor: Any = SafeConstructor

    parser: Any
    try:  # `yaml` itself does not export CParser: libyaml's is `yaml._yaml`
        from yaml._yaml import CParser as parser
    except ImportError:  # pure-Python PyYAML: the same syntax, read more slowly
        from yaml.composer import Composer
        from yaml.parser import Parser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        class PyParser(Reader, Scanner, Parser, Composer):
            def __init__(self, stream: Any) -> None:
                Reader.__init__(self, stream)
                Scanner.__init__(self)
                Parser.__init__(self)
                Composer.__init__(self)

        parser = PyParser

    class Resolver12(base_resolver):  # type: ignore[misc]
        pass

    add_core_resolvers(Resolver12)

    class Constructor12(base_constructor):  # type: ignore[misc]
        yaml_constructors: dict[Any, Any] = {}

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if not isinstance(node, yaml.MappingNode):
                raise ConstructorError(None, None, "expected a mapping", node.start_mark)
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = _json_key(self.construct_object(key_node, deep=deep))
                if key in mapping:
                    raise Yaml12Error(
                        f"the key {key!r} appears twice (line {key_node.start_mark.line + 1}); "
                        "YAML 1.2 refuses duplicate keys, so remove one"
                    )
                mapping[key] = self.construct_object(value_node, deep=deep)
            return mapping

    def construct_map(loader: Any, node: Any) -> Any:
        data: dict[str, Any] = {}
        yield data
        data.update(loader.construct_mapping(node))

    def construct_int(loader: Any, node: Any) -> int:
        return core_int(loader.construct_scalar(node))

    def construct_float(loader: Any, node: Any) -> float:
        text: str = loader.construct_scalar(node)
        value = core_float(text)
        if value != value or value in (float("inf"), float("-inf")):
            raise Yaml12Error(
                f"the value {text!r} (line {node.start_mark.line + 1}) is not a finite "
                "number and has no JSON form; quote it"
            )
        return value

    def construct_bool(loader: Any, node: Any) -> bool:
        return core_bool(loader.construct_scalar(node))

    def construct_null(loader: Any, node: Any) -> None:
        loader.construct_scalar(node)

    def refuse_tag(loader: Any, node: Any) -> Any:
        raise Yaml12Error(
            f"the tag {node.tag!r} (line {node.start_mark.line + 1}) is read differently by "
            "YAML 1.1 and 1.2 parsers; remove it"
        )

    Constructor12.add_constructor(STR, base_constructor.construct_yaml_str)
    Constructor12.add_constructor(SEQ, base_constructor.construct_yaml_seq)
    Constructor12.add_constructor(MAP, construct_map)
    Constructor12.add_constructor(NULL, construct_null)
    Constructor12.add_constructor(BOOL, construct_bool)
    Constructor12.add_constructor(INT, construct_int)
    Constructor12.add_constructor(FLOAT, construct_float)
    Constructor12.add_constructor(None, refuse_tag)

    class Loader12(parser, Constructor12, Resolver12):  # type: ignore[misc]
        def __init__(self, stream: Any) -> None:
            parser.__init__(self, stream)
            Constructor12.__init__(self)
            Resolver12.__init__(self)

    return Loader12


def same_json(a: Any, b: Any) -> bool:
    """JSON equality as a YAML 1.2 host written in JavaScript sees it: `1 == 1.0`, but
    never `true == 1`; mappings compare key by key, in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)
