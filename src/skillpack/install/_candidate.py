"""A payload checked and described: strict validation, digests, summary and audit.

Every source ends here before anything is written: the SKILL.md (the bytes that will
be installed) must pass strict validation with the skill's folder name, and the
name must be a valid folder name; then the files are digested, summarized for the
approval and audited.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._model import SKILL_FILE as SKILL_FILE
from .._model import Skill
from ._audit import audit_files
from ._digest import file_digests, skill_digest
from ._values import Candidate, Origin, Payload, Refused, SkillSummary

_CODEX_FILES = ("agents/openai.yaml", "agents/openai.yml")


def make_candidate(payload: Payload, origin: Origin, *, name: str | None = None) -> Candidate:
    """Validate `payload` as the skill `name` (default: its frontmatter name).

    Raises:
        Refused: `skill-md-missing`, or `skill-invalid` with every strict problem.
    """
    skill = validate_payload(payload, name=name, label=origin.label())
    digests = file_digests(payload.files)
    return Candidate(
        name=skill.name,
        payload=payload,
        origin=origin,
        summary=summarize(skill, payload),
        file_digests=digests,
        skill_digest=skill_digest(digests),
        findings=audit_files(payload.files),
    )


def validate_payload(payload: Payload, *, name: str | None, label: str) -> Skill:
    """The strictly validated skill of `payload`, installed as folder `name`."""
    from ..parse._frontmatter import parse_skill_bytes

    data = payload.files.get(SKILL_FILE)
    if data is None:
        raise Refused(
            "skill-md-missing",
            f"{name or 'The skill'} from {label} has no SKILL.md at its root; a skill folder "
            "must contain one.",
        )
    codex_path, codex_text = _codex(payload.files)
    if name is None:
        loose = parse_skill_bytes(data, path=f"{label}/SKILL.md")
        name = str(loose.skill.frontmatter.get("name", "")) if loose.skill else ""
        name = name or "skill"
    parsed = parse_skill_bytes(
        data,
        path=f"{name}/SKILL.md",
        dir_name=name,
        strict=True,
        codex_yaml=codex_text,
        codex_path=codex_path,
    )
    errors = [p for p in parsed.problems if p.severity == "error"]
    if parsed.skill is None or errors:
        details = "; ".join(f"{p.code}: {p.message}" for p in errors)
        raise Refused(
            "skill-invalid",
            f"{name} from {label} fails strict validation, so it was not installed: {details}",
        )
    return parsed.skill


def summarize(skill: Skill, payload: Payload) -> SkillSummary:
    files = tuple(sorted(payload.files))
    scripts = tuple(
        path
        for path in files
        if path.startswith("scripts/")
        or path in payload.executable
        or payload.files[path][:2] == b"#!"
    )
    dependencies: tuple[str, ...] = ()
    if skill.codex is not None:
        dependencies = tuple(
            f"{dep.get('type', '?')}:{dep.get('value', dep.get('name', '?'))}"
            for dep in skill.codex.tool_dependencies
        )
    return SkillSummary(
        name=skill.name,
        description=skill.description,
        files=files,
        scripts=scripts,
        allowed_tools=skill.allowed_tools,
        hooks=skill.hooks,
        dependencies=dependencies,
        size=sum(len(data) for data in payload.files.values()),
    )


def _codex(files: Mapping[str, bytes]) -> tuple[str | None, str | None]:
    for path in _CODEX_FILES:
        data = files.get(path)
        if data is not None:
            return path, data.decode("utf-8", "replace")
    return None, None
