"""The re-check of a load: text read for injection must still parse as a skill.

Discovery parsed the file once; by the time a session injects it, it may have changed.
`loadable_body` parses the text again by the rule that found it (a SKILL.md, or a
legacy command file) and returns the body only when it still makes a skill.
"""

from __future__ import annotations

from .._errors import SkillParseError
from .._model import SkillLocation
from ._command import parse_command_bytes
from ._frontmatter import parse_skill


def loadable_body(text: str, *, path: str, skill_dir: str | None = None) -> str:
    """The body of a skill file's text, once the text is checked to still parse (the
    lenient rules): what changed since discovery must not inject raw frontmatter.

    Raises:
        SkillParseError: the text no longer parses; its `problems` say why and the
            message names the file and the first error.
    """
    if path.endswith("SKILL.md"):
        parsed = parse_skill(text, path=path, location=SkillLocation(dir=skill_dir))
    else:  # a legacy command file (`.claude/commands/**/<name>.md`)
        parsed = parse_command_bytes(text.encode("utf-8"), path=path)
    if parsed.skill is None:
        first = next(p for p in parsed.problems if p.severity == "error")
        raise SkillParseError(
            f"{path} no longer parses as a skill, so it was not loaded: {first.message}",
            problems=parsed.problems,
        )
    return parsed.body
