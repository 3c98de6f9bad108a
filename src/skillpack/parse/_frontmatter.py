"""Split a SKILL.md into frontmatter and body, and parse it into a `Skill`.

Pure: text in, `ParsedSkill` (a `Skill` or None, the body, the problems) out. The
pieces live beside it: `_yaml.py` loads the YAML (with one retry), `_json_safe.py`
copies values within a budget, `_fields.py` types each known field, `_codex.py` reads
the Codex sidecar, and the spec rules themselves live in `_validate.py`. Discovery
reads the bytes and calls `parse_skill_bytes` once per SKILL.md, so this is the hot
path of a cold discovery: the split uses plain string searches (never a regex over the
body), YAML goes through libyaml's `CSafeLoader` (YAML 1.2 scalars), and work that
only matters for problems (line numbers, suggestions) happens only when there is a
problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from sys import intern
from typing import Any, NamedTuple

from .._limits import MAX_FRONTMATTER_CHARS as MAX_FRONTMATTER_CHARS
from .._model import CodexMetadata, Problem, Skill, SkillLocation
from ._agents import bom_problem, with_agent_notes
from ._codex import parse_codex_metadata
from ._fields import EMPTY_TUPLE_FIELDS, FIELD_HANDLERS, FRONTMATTER_FIRST_LINE, Reader
from ._json_safe import MAX_EXPANDED_CHARS, Budget, TooLarge, json_safe, kind_of, scalar_text
from ._skill_build import new_skill
from ._validate import (
    apply_strict,
    check_unknown_fields,
    check_when_to_use,
    description_from_body,
    description_from_body_problem,
    validate_fields,
)
from ._yaml import load_yaml, normalize, quote_colon_values, yaml_error_text, yaml_errors, yaml_fix


@dataclass(frozen=True, kw_only=True, slots=True)
class ParsedSkill:
    """The result of parsing one SKILL.md."""

    skill: Skill | None
    """The skill; None when any problem has severity `error` (in strict mode too)."""
    body: str
    """The Markdown after the closing `---` (LF line endings, no BOM); the whole text
    when the file has no complete frontmatter; "" for undecodable bytes."""
    problems: tuple[Problem, ...]


class FrontmatterSplit(NamedTuple):
    """`split_frontmatter`'s result; unpacks as `(frontmatter, body, body_line)`."""

    frontmatter: str | None
    """The text between the `---` lines, or None when there is no complete frontmatter."""
    body: str
    """What follows the closing `---` line (the whole text when there is no frontmatter)."""
    body_line: int
    """1-based line of the file where `body` starts."""


# ---------------------------------------------------------------------------- split

_OK, _MISSING, _UNCLOSED = 0, 1, 2


def _split(text: str) -> tuple[int, str, str, int]:
    """(status, frontmatter, body, body_line) of normalized text."""
    nl = text.find("\n")
    first = text if nl < 0 else text[:nl]
    if first.rstrip(" \t\r") != "---":
        return _MISSING, "", text, 1
    if nl < 0:
        return _UNCLOSED, "", text, 1
    # Only a line that is exactly `---` (plus trailing blanks) closes: `a---b`,
    # `----` and indented `---` inside block scalars do not.
    i = text.find("\n---", nl)
    while i >= 0:
        start = i + 4
        end = text.find("\n", start)
        tail = text[start:] if end < 0 else text[start:end]
        if not tail or not tail.strip(" \t\r"):
            frontmatter = text[nl + 1 : i] if i > nl else ""
            body = "" if end < 0 else text[end + 1 :]
            return _OK, frontmatter, body, text.count("\n", 0, i + 1) + 2
        if end < 0:
            break
        i = text.find("\n---", end)
    return _UNCLOSED, "", text, 1


def split_frontmatter(text: str) -> FrontmatterSplit:
    """Split SKILL.md text into (frontmatter, body, body_line).

    The first line must be `---` (a BOM, trailing blanks and CRLF are tolerated); the
    frontmatter ends at the next line that is exactly `---`. Without a complete
    frontmatter, `frontmatter` is None and the whole text is the body.
    """
    status, frontmatter, body, body_line = _split(normalize(text))
    return FrontmatterSplit(frontmatter if status == _OK else None, body, body_line)


# ---------------------------------------------------------------------------- parse


def _error(path: str, code: str, message: str, *, line: int | None = None) -> Problem:
    return Problem(path=path, severity="error", code=code, message=message, line=line)


class _Refused(Exception):
    """A step found an error that stops the parse; `problem` says which."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def parse_skill(
    text: str,
    *,
    path: str,
    location: SkillLocation | None = None,
    dir_name: str | None = None,
    strict: bool = False,
    codex_yaml: str | None = None,
    codex_path: str | None = None,
) -> ParsedSkill:
    """Parse the text of one SKILL.md into a `Skill` plus problems.

    Args:
        text: The file's text (a BOM and CRLF line endings are tolerated).
        path: Path of the SKILL.md (`Skill.path`).
        location: Where discovery found it (folder, real path, scope, rank, root,
            plugin, stat), copied into the Skill; default: a folder-less `extra` skill
            whose folder is the one holding `path`.
        dir_name: Directory name the `name` is checked against; defaults to the
            name of the skill's folder.
        strict: Turn spec warnings into errors and report unknown fields.
        codex_yaml: Text of `agents/openai.yaml` beside the skill, if there is one.
        codex_path: Path of that file, for its problems.

    Returns:
        A `ParsedSkill`; its `skill` is None exactly when a problem is an error.
    """
    where = location or SkillLocation()
    skill_dir = where.dir or os.path.dirname(path)
    if dir_name is None:
        dir_name = os.path.basename(skill_dir)
    status, source, body, body_line = _split(normalize(text))
    problems: list[Problem] = []
    try:
        _check_split(status, source, path=path, dir_name=dir_name)
        plain: dict[str, str] = {}
        data = _load_mapping(source, path=path, problems=problems, plain=plain)
        reader = Reader(path, source, problems, plain)
        fields, frontmatter, extra = _read_fields(data, reader, path=path)
    except _Refused as refused:
        return ParsedSkill(
            skill=None, body=body, problems=tuple(with_agent_notes([refused.problem]))
        )

    if text.startswith("\ufeff"):
        problems.insert(0, bom_problem(path))
    name: str | None = fields.pop("name", None)
    description: object = fields.pop("description", None)
    body_chars = len(body)
    body_lines = body.count("\n") + (1 if body and body[-1] != "\n" else 0)
    if description is None and not strict:
        # Claude Code's fallback: the body's first paragraph (strict keeps the error).
        found = description_from_body(body)
        if found is not None:
            description = found[0]
            problems.append(description_from_body_problem(path, body_line + found[1]))
    problems += validate_fields(
        path=path,
        dir_name=dir_name,
        name=name,
        description=description,
        compatibility=fields.get("compatibility"),
        body_lines=body_lines,
        body_chars=body_chars,
        body_line=body_line,
        line_of=reader.line_of,
    )
    problems += check_when_to_use(
        description, fields.get("when_to_use"), path=path, line_of=reader.line_of
    )
    if strict and extra:
        problems += check_unknown_fields(extra, path=path, line_of=reader.line_of)
    codex: CodexMetadata | None = None
    if codex_yaml is not None:
        codex, codex_problems = parse_codex_metadata(
            codex_yaml, path=codex_path or os.path.join(skill_dir, "agents", "openai.yaml")
        )
        problems += codex_problems

    if problems:
        problems = with_agent_notes(problems, data.get("name"))
    final = apply_strict(problems) if strict else tuple(problems)
    if any(p.severity == "error" for p in final):
        return ParsedSkill(skill=None, body=body, problems=final)
    for attribute in EMPTY_TUPLE_FIELDS:
        if attribute in fields and fields[attribute] is None:
            fields[attribute] = ()
    if fields.get("metadata") is None:
        fields.pop("metadata", None)
    skill = new_skill(
        name=name or dir_name,
        description=description if isinstance(description, str) else "",
        path=path,
        dir=skill_dir,
        real_path=where.real_path,
        scope=where.scope,
        rank=where.rank,
        root=where.root,
        plugin=where.plugin,
        extra=extra,
        frontmatter=frontmatter,
        codex=codex,
        body_lines=body_lines,
        body_chars=body_chars,
        mtime_ns=where.mtime_ns,
        size=where.size,
        **fields,
    )
    return ParsedSkill(skill=skill, body=body, problems=final)


def _check_split(status: int, source: str, *, path: str, dir_name: str) -> None:
    """Refuse a file without a closed frontmatter, or with one over the size limit."""
    if status == _MISSING:
        raise _Refused(
            _error(
                path,
                "frontmatter-missing",
                f"{path} does not start with a `---` line, so it has no YAML frontmatter; "
                f"add `---`, `name: {dir_name}`, `description: ...` and a closing `---` "
                "at the top of the file.",
                line=1,
            )
        )
    if status == _UNCLOSED:
        raise _Refused(
            _error(
                path,
                "frontmatter-unclosed",
                f"the frontmatter of {path} opened by `---` on line 1 is never closed; add "
                "a line containing only `---` after the last field.",
                line=1,
            )
        )
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise _Refused(
            _error(
                path,
                "frontmatter-too-large",
                f"the frontmatter of {path} is {len(source)} characters, over the "
                f"{MAX_FRONTMATTER_CHARS}-character limit; move long text into the body "
                "or into files the body links to.",
                line=FRONTMATTER_FIRST_LINE,
            )
        )


def _too_large(path: str, exc: TooLarge) -> _Refused:
    return _Refused(
        _error(
            path,
            "frontmatter-too-large",
            f"the frontmatter of {path} {exc.why()}.",
            line=FRONTMATTER_FIRST_LINE,
        )
    )


def _load_mapping(
    source: str, *, path: str, problems: list[Problem], plain: dict[str, str]
) -> dict[Any, Any]:
    """The frontmatter as a mapping: YAML, with the one `key: a: b` retry;
    `plain` gets the text of its top-level plain scalars (`load_yaml`)."""
    try:
        data = load_yaml(source, plain)
    except TooLarge as exc:
        raise _too_large(path, exc) from None
    except yaml_errors() as exc:
        rewritten, retried = quote_colon_values(source)
        data = None
        if retried:
            try:
                data = load_yaml(rewritten, plain)
            except TooLarge as too_large:
                raise _too_large(path, too_large) from None
            except yaml_errors():
                retried = []
        if not retried:
            where, line = yaml_error_text(exc, FRONTMATTER_FIRST_LINE)
            fix = yaml_fix(where, source)
            raise _Refused(
                _error(
                    path,
                    "yaml-invalid",
                    f"the frontmatter of {path} is not valid YAML{where}. {fix}",
                    line=line,
                )
            ) from None
        fields_text = ", ".join(f"'{key}'" for key in retried)
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="yaml-retried",
                field=retried[0],
                line=Reader(path, source, problems).line_of(retried[0]),
                message=(
                    f"the frontmatter of {path} is not valid YAML as written: the value of "
                    f"{fields_text} contains ': '. It was read as a block scalar; quote the "
                    f'value (e.g. {retried[0]}: "...") so every YAML parser reads it.'
                ),
            )
        )
    if data is None:
        return {}  # `---\n---`: an empty mapping, which then lacks a description
    if not isinstance(data, dict):
        raise _Refused(
            _error(
                path,
                "frontmatter-not-mapping",
                f"the frontmatter of {path} is a {kind_of(data)}, not a mapping of fields; "
                "write it as `key: value` lines (name: ..., description: ...).",
                line=FRONTMATTER_FIRST_LINE,
            )
        )
    return data


def _read_fields(
    data: dict[Any, Any], reader: Reader, *, path: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(typed known fields, the frontmatter JSON-safe, unknown keys) within the budget."""
    fields: dict[str, Any] = {}
    frontmatter: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    budget = Budget(MAX_EXPANDED_CHARS)
    try:
        for raw_key, raw in data.items():
            # Interned, every skill's `name`, `description`, ... key is one object: the
            # index stores it once per snapshot and a warm run decodes it once.
            key = intern(raw_key) if type(raw_key) is str else scalar_text(raw_key)
            if type(raw) is str:
                budget.left -= len(raw)
                value: Any = raw
            else:
                value = json_safe(raw, budget, 1)
            frontmatter[key] = value
            handler = FIELD_HANDLERS.get(key)
            if handler is None:
                extra[key] = value
            else:
                handler(reader, raw, value, key, fields)
        if budget.left < 0:
            raise TooLarge("aliases")
    except TooLarge as exc:
        raise _too_large(path, exc) from None
    return fields, frontmatter, extra


def _failed(body: str, problem: Problem) -> ParsedSkill:
    return ParsedSkill(skill=None, body=body, problems=tuple(with_agent_notes([problem])))


def parse_skill_bytes(
    data: bytes,
    *,
    path: str,
    location: SkillLocation | None = None,
    dir_name: str | None = None,
    strict: bool = False,
    codex_yaml: str | None = None,
    codex_path: str | None = None,
) -> ParsedSkill:
    """Decode the bytes of a SKILL.md as UTF-8 (BOM allowed) and `parse_skill` them.

    NUL bytes give `file-binary`; UTF-16 or other undecodable bytes give
    `encoding-invalid`. Keywords are those of `parse_skill`.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return _failed(
            "",
            _error(
                path,
                "encoding-invalid",
                f"{path} is encoded as UTF-16; re-save it as UTF-8.",
                line=1,
            ),
        )
    if b"\x00" in data:
        return _failed(
            "",
            _error(
                path,
                "file-binary",
                f"{path} contains NUL bytes, so it is not a text file; a SKILL.md must be "
                "UTF-8 Markdown. Replace it with the skill's text.",
            ),
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return _failed(
            "",
            _error(
                path,
                "encoding-invalid",
                f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); "
                "re-save it as UTF-8.",
                line=line,
            ),
        )
    return parse_skill(
        text,
        path=path,
        location=location,
        dir_name=dir_name,
        strict=strict,
        codex_yaml=codex_yaml,
        codex_path=codex_path,
    )
