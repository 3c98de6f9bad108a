"""Every real SKILL.md of the corpus parses; per-file and total expectations are pinned.

The corpus holds 398 SKILL.md files from 15 public repositories. The pins below were
read off the files themselves; a change in any count means parsing changed.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import REAL_SKILLS
from skillpack._model import Skill, SkillLocation
from skillpack._text import single_line
from skillpack.parse._frontmatter import ParsedSkill, parse_skill_bytes
from skillpack.parse._skill_json import skill_from_dict, skill_to_dict

pytestmark = pytest.mark.corpus

CORPUS = tuple(sorted(p.relative_to(REAL_SKILLS).as_posix() for p in REAL_SKILLS.rglob("SKILL.md")))


@functools.cache
def parsed(relpath: str, strict: bool = False) -> ParsedSkill:
    path = REAL_SKILLS / relpath
    data = path.read_bytes()
    return parse_skill_bytes(
        data, path=str(path), strict=strict, location=SkillLocation(size=len(data))
    )


def skill(relpath: str) -> Skill:
    result = parsed(relpath)
    assert result.skill is not None, result.problems
    return result.skill


def codes(relpath: str, strict: bool = False) -> list[tuple[str, str]]:
    return sorted((p.code, p.severity) for p in parsed(relpath, strict).problems)


def test_corpus_has_398_skill_files() -> None:
    assert len(CORPUS) == 398


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_every_file_loads_or_has_an_error_and_loaded_skills_round_trip(strict: bool) -> None:
    for relpath in CORPUS:
        result = parsed(relpath, strict)
        has_error = any(p.severity == "error" for p in result.problems)
        assert (result.skill is None) is has_error, relpath
        for problem in result.problems:
            assert problem.path == str(REAL_SKILLS / relpath)
            assert problem.path in problem.message
        if result.skill is not None:
            data = json.loads(json.dumps(skill_to_dict(result.skill), allow_nan=False))
            assert skill_from_dict(data) == result.skill, relpath
            assert result.skill.body_chars == len(result.body)


LENIENT_TOTALS = {
    ("body-too-long", "warning"): 37,
    ("description-too-long", "warning"): 1,
    ("frontmatter-missing", "error"): 1,
    # 14 before: the 11 unquoted `updated: 2026-03-05` dates are text in YAML 1.2.
    ("metadata-coerced", "warning"): 3,
    ("name-invalid", "warning"): 2,
    ("name-mismatch", "warning"): 14,
}
STRICT_TOTALS = {
    ("body-too-long", "error"): 37,
    ("description-too-long", "error"): 1,
    ("field-unknown", "warning"): 52,
    ("frontmatter-missing", "error"): 1,
    ("metadata-coerced", "error"): 3,
    ("name-invalid", "error"): 2,
    ("name-mismatch", "error"): 14,
}


@pytest.mark.parametrize(
    ("strict", "loaded", "totals"),
    [
        pytest.param(False, 397, LENIENT_TOTALS, id="lenient"),
        # 330 before: the 11 skills whose only strict error was a date.
        pytest.param(True, 341, STRICT_TOTALS, id="strict"),
    ],
)
def test_corpus_totals(strict: bool, loaded: int, totals: dict[tuple[str, str], int]) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    for relpath in CORPUS:
        counts.update((p.code, p.severity) for p in parsed(relpath, strict).problems)
    assert sum(parsed(relpath, strict).skill is not None for relpath in CORPUS) == loaded
    assert dict(counts) == totals


NAME_MISMATCH = {
    "anthropics__claude-plugins-official/plugins/hookify/skills/writing-rules/SKILL.md": (
        "writing-hookify-rules"
    ),
    "github__awesome-copilot/skills/qdrant-monitoring/setup/SKILL.md": "qdrant-monitoring-setup",
    "github__awesome-copilot/skills/qdrant-performance-optimization/"
    "indexing-performance-optimization/SKILL.md": "qdrant-indexing-performance-optimization",
    "github__awesome-copilot/skills/qdrant-performance-optimization/"
    "search-speed-optimization/SKILL.md": "qdrant-search-speed-optimization",
    "github__awesome-copilot/skills/qdrant-scaling/minimize-latency/SKILL.md": (
        "qdrant-minimize-latency"
    ),
    "github__awesome-copilot/skills/qdrant-scaling/scaling-data-volume/horizontal-scaling/"
    "SKILL.md": "qdrant-horizontal-scaling",
    "github__awesome-copilot/skills/qdrant-scaling/scaling-data-volume/tenant-scaling/"
    "SKILL.md": "qdrant-tenant-scaling",
    "github__awesome-copilot/skills/qdrant-scaling/scaling-qps/SKILL.md": "qdrant-scaling-qps",
    "github__awesome-copilot/skills/qdrant-search-quality/search-strategies/SKILL.md": (
        "qdrant-search-strategies"
    ),
    "vercel-labs__agent-skills/skills/composition-patterns/SKILL.md": (
        "vercel-composition-patterns"
    ),
    "vercel-labs__agent-skills/skills/react-best-practices/SKILL.md": (
        "vercel-react-best-practices"
    ),
    "vercel-labs__agent-skills/skills/react-native-skills/SKILL.md": "vercel-react-native-skills",
    "vercel-labs__agent-skills/skills/react-view-transitions/SKILL.md": (
        "vercel-react-view-transitions"
    ),
    "wshobson__agents/plugins/database-design/skills/postgresql/SKILL.md": (
        "postgresql-table-design"
    ),
}


def test_name_mismatch_files_keep_their_frontmatter_name() -> None:
    flagged = {r for r in CORPUS if any(p.code == "name-mismatch" for p in parsed(r).problems)}
    assert flagged == set(NAME_MISMATCH)
    for relpath, name in NAME_MISMATCH.items():
        assert skill(relpath).name == name
        folder = Path(relpath).parent.name
        assert f"`name: {folder}`" in parsed(relpath).problems[0].message


LEADING_HYPHEN = {
    "ComposioHQ__awesome-claude-skills/composio-skills/-21risk-automation/SKILL.md": (
        "-21risk-automation",
        "21risk-automation",
    ),
    "ComposioHQ__awesome-claude-skills/composio-skills/-2chat-automation/SKILL.md": (
        "-2chat-automation",
        "2chat-automation",
    ),
}


@pytest.mark.parametrize(("relpath", "names"), LEADING_HYPHEN.items(), ids=lambda v: str(v)[:40])
def test_leading_hyphen_names_load_with_a_rename_suggestion(
    relpath: str, names: tuple[str, str]
) -> None:
    name, suggestion = names
    assert skill(relpath).name == name
    assert codes(relpath) == [("name-invalid", "warning")]
    # `requires` is not a skill field: strict reports it, as a warning only.
    assert codes(relpath, strict=True) == [("field-unknown", "warning"), ("name-invalid", "error")]
    assert parsed(relpath, strict=True).skill is None
    assert f"rename it to '{suggestion}'" in parsed(relpath).problems[0].message


def test_the_1068_character_description_loads_with_a_warning() -> None:
    relpath = "anthropics__skills/skills/claude-api/SKILL.md"
    assert len(skill(relpath).description) == 1068
    # Its two line breaks read as spaces (descriptions are one line).
    assert skill(relpath).description.count("\n") == 0
    assert codes(relpath) == [("body-too-long", "warning"), ("description-too-long", "warning")]
    assert "1068 characters" in next(
        p.message for p in parsed(relpath).problems if p.code == "description-too-long"
    )


def test_the_file_without_frontmatter_is_not_loaded() -> None:
    relpath = (
        "alirezarezvani__claude-skills/engineering/skills/skill-tester/assets/sample-skill/SKILL.md"
    )
    assert codes(relpath) == [("frontmatter-missing", "error")]
    assert parsed(relpath).problems[0].line == 1
    # The file opens with a heading followed by a `---` rule: never mistaken for frontmatter.
    assert parsed(relpath).body.startswith("# ")


HORIZONTAL_RULE = re.compile(r"(?m)^---[ \t]*$")


def test_horizontal_rules_in_bodies_stay_in_the_body() -> None:
    with_rules = [r for r in CORPUS if HORIZONTAL_RULE.search(parsed(r).body)]
    assert len(with_rules) == 110
    loaded_with_rules = [r for r in with_rules if parsed(r).skill is not None]
    assert len(loaded_with_rules) == 109
    for relpath in loaded_with_rules:
        loaded = skill(relpath)
        # The frontmatter ended at its own closing line, not at a rule in the body.
        assert loaded.description and "\n---" not in loaded.description
        text = (REAL_SKILLS / relpath).read_bytes().decode("utf-8").replace("\r\n", "\n")
        assert text.endswith(parsed(relpath).body)


BLOCK_SCALARS = {
    # relpath: (indicator, length after stripping, newlines kept)
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/coverage/SKILL.md": (
        ">-",
        162,
        0,
    ),
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/fix/SKILL.md": (
        ">-",
        180,
        0,
    ),
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/migrate/SKILL.md": (
        ">-",
        195,
        0,
    ),
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/review/SKILL.md": (
        ">-",
        183,
        0,
    ),
    "alirezarezvani__claude-skills/engineering-team/skills/epic-design/SKILL.md": (">", 875, 0),
    "alirezarezvani__claude-skills/product-team/code-to-prd/skills/code-to-prd/SKILL.md": (
        "|",
        777,  # 778 with its 9 line breaks, before descriptions were put on one line
        0,
    ),
    "anthropics__skills/skills/claude-api/SKILL.md": ("|-", 1068, 0),  # 2 line breaks
    "github__awesome-copilot/skills/brag-sheet/SKILL.md": (">", 847, 0),
    "github__awesome-copilot/skills/copilot-cli-quickstart/SKILL.md": (">", 367, 0),
    "github__awesome-copilot/skills/eval-driven-dev/SKILL.md": (">", 448, 0),
    "github__awesome-copilot/skills/flowstudio-power-automate-governance/SKILL.md": (
        ">-",
        733,
        0,
    ),
    "github__awesome-copilot/skills/geofeed-tuner/SKILL.md": (">", 629, 0),
    "github__awesome-copilot/skills/github-release/SKILL.md": (">", 146, 0),
    "wshobson__agents/plugins/conductor/skills/context-driven-development/SKILL.md": (
        ">-",
        527,
        0,
    ),
    "wshobson__agents/plugins/hermes-tweet/skills/hermes-tweet/SKILL.md": (">", 459, 0),
    "wshobson__agents/plugins/skill-forge-essentials/skills/session-guard/SKILL.md": (
        ">-",
        354,
        0,
    ),
}


def test_block_scalar_descriptions() -> None:
    found = {
        r
        for r in CORPUS
        if re.search(r"(?m)^description: *[>|]", (REAL_SKILLS / r).read_text(encoding="utf-8"))
        and parsed(r).skill is not None
    }
    assert found == set(BLOCK_SCALARS)
    for relpath, (indicator, length, newlines) in BLOCK_SCALARS.items():
        description = skill(relpath).description
        assert single_line(skill(relpath).frontmatter["description"]) == description
        assert (len(description), description.count("\n")) == (length, newlines), indicator
        assert description == description.strip()


DATE_METADATA = {
    "alirezarezvani__claude-skills/c-level-advisor/skills/chief-of-staff/SKILL.md": "2026-03-05",
    "alirezarezvani__claude-skills/c-level-advisor/skills/cpo-advisor/SKILL.md": "2026-03-05",
    "alirezarezvani__claude-skills/c-level-advisor/skills/intl-expansion/SKILL.md": "2026-03-05",
    "alirezarezvani__claude-skills/engineering-team/skills/epic-design/SKILL.md": "2026-03-13",
    "alirezarezvani__claude-skills/engineering/autoresearch-agent/skills/autoresearch-agent/"
    "SKILL.md": "2026-03-13",
    "alirezarezvani__claude-skills/marketing-skill/skills/ai-seo/SKILL.md": "2026-03-06",
    "alirezarezvani__claude-skills/marketing-skill/skills/content-humanizer/SKILL.md": (
        "2026-03-06"
    ),
    "alirezarezvani__claude-skills/marketing-skill/skills/launch-strategy/SKILL.md": "2026-03-06",
    "alirezarezvani__claude-skills/marketing-skill/skills/paywall-upgrade-cro/SKILL.md": (
        "2026-03-06"
    ),
    "alirezarezvani__claude-skills/marketing-skill/skills/signup-flow-cro/SKILL.md": "2026-03-06",
    "alirezarezvani__claude-skills/product-team/code-to-prd/skills/code-to-prd/SKILL.md": (
        "2026-03-17"
    ),
}
OTHER_METADATA_COERCED = {
    "Jeffallan__claude-skills/skills/swift-expert/SKILL.md": ("related-skills", "null"),
    "K-Dense-AI__claude-scientific-skills/scientific-skills/markdown-mermaid-writing/SKILL.md": (
        "skill-contributors",
        "list",
    ),
    "github__awesome-copilot/skills/acquire-codebase-knowledge/SKILL.md": (
        "enhancements",
        "list",
    ),
}


def test_date_valued_metadata_is_text_as_yaml_1_2_reads_it() -> None:
    for relpath, date in DATE_METADATA.items():
        assert skill(relpath).metadata["updated"] == date
        assert skill(relpath).frontmatter["metadata"]["updated"] == date
        assert not [p for p in parsed(relpath).problems if p.code == "metadata-coerced"]
    for relpath, (key, kind) in OTHER_METADATA_COERCED.items():
        [problem] = [p for p in parsed(relpath).problems if p.code == "metadata-coerced"]
        assert f"{key} ({kind})" in problem.message
    flagged = {r for r in CORPUS if any(p.code == "metadata-coerced" for p in parsed(r).problems)}
    assert flagged == set(OTHER_METADATA_COERCED)


_PLUGINS = "anthropics__claude-plugins-official"
LIST_ALLOWED_TOOLS = {
    f"{_PLUGINS}/external_plugins/discord/skills/access/SKILL.md": (
        "Read",
        "Write",
        "Bash(ls *)",
        "Bash(mkdir *)",
    ),
    f"{_PLUGINS}/external_plugins/discord/skills/configure/SKILL.md": (
        "Read",
        "Write",
        "Bash(ls *)",
        "Bash(mkdir *)",
    ),
    f"{_PLUGINS}/external_plugins/imessage/skills/access/SKILL.md": (
        "Read",
        "Write",
        "Bash(ls *)",
        "Bash(mkdir *)",
    ),
    f"{_PLUGINS}/external_plugins/imessage/skills/configure/SKILL.md": ("Read", "Bash(ls *)"),
    f"{_PLUGINS}/external_plugins/telegram/skills/access/SKILL.md": (
        "Read",
        "Write",
        "Bash(ls *)",
        "Bash(mkdir *)",
        "Bash(echo *)",
    ),
    f"{_PLUGINS}/external_plugins/telegram/skills/configure/SKILL.md": (
        "Read",
        "Write",
        "Bash(ls *)",
        "Bash(mkdir *)",
        "Bash(echo *)",
        "Bash(chmod *)",
    ),
    f"{_PLUGINS}/plugins/example-plugin/skills/example-command/SKILL.md": (
        "Read",
        "Glob",
        "Grep",
        "Bash",
    ),
    "github__awesome-copilot/skills/qdrant-monitoring/SKILL.md": ("Read", "Grep", "Glob"),
    "github__awesome-copilot/skills/qdrant-search-quality/SKILL.md": ("Read", "Grep", "Glob"),
}
STRING_ALLOWED_TOOLS = {
    "expo__skills/plugins/expo/skills/eas-workflows/SKILL.md": (
        "Read",
        "Write",
        "Bash(node:*)",
        "Bash(npx *eas-cli@*)",
    ),
    "shadcn-ui__ui/skills/shadcn/SKILL.md": (
        "Bash(npx shadcn@latest *)",
        "Bash(pnpm dlx shadcn@latest *)",
        "Bash(bunx --bun shadcn@latest *)",
    ),
    "getsentry__skills/skills/gh-review-requests/SKILL.md": ("Bash",),
    "Jeffallan__claude-skills/skills/security-reviewer/SKILL.md": ("Read", "Grep", "Glob", "Bash"),
    "expo__skills/plugins/expo/skills/expo-ui/SKILL.md": (
        "Bash(node *expo-ui/scripts/list-components.js *)",
    ),
}


def test_allowed_tools_in_list_and_string_form() -> None:
    written = {
        r: skill(r).frontmatter["allowed-tools"]
        for r in CORPUS
        if parsed(r).skill is not None and "allowed-tools" in skill(r).frontmatter
    }
    as_list = {r for r, value in written.items() if isinstance(value, list)}
    as_text = {r for r, value in written.items() if isinstance(value, str)}
    assert as_list == set(LIST_ALLOWED_TOOLS)
    assert len(as_text) == 32
    assert set(STRING_ALLOWED_TOOLS) <= as_text
    for relpath, tools in {**LIST_ALLOWED_TOOLS, **STRING_ALLOWED_TOOLS}.items():
        assert skill(relpath).allowed_tools == tools, relpath
    for relpath in as_text:
        # No separator leaks into a tool name (outside a pattern's parentheses).
        for tool in skill(relpath).allowed_tools or ():
            assert tool and not re.search(r"[\s,]", tool.split("(")[0]), (relpath, tool)


ARGUMENTS_FILES = {
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/fix/SKILL.md": 1,
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/migrate/SKILL.md": 1,
    "alirezarezvani__claude-skills/engineering-team/playwright-pro/skills/review/SKILL.md": 1,
    f"{_PLUGINS}/external_plugins/discord/skills/access/SKILL.md": 2,
    f"{_PLUGINS}/external_plugins/discord/skills/configure/SKILL.md": 2,
    f"{_PLUGINS}/external_plugins/imessage/skills/access/SKILL.md": 2,
    f"{_PLUGINS}/external_plugins/imessage/skills/configure/SKILL.md": 1,
    f"{_PLUGINS}/external_plugins/telegram/skills/access/SKILL.md": 2,
    f"{_PLUGINS}/external_plugins/telegram/skills/configure/SKILL.md": 2,
    f"{_PLUGINS}/plugins/example-plugin/skills/example-command/SKILL.md": 1,
    f"{_PLUGINS}/plugins/plugin-dev/skills/command-development/SKILL.md": 2,
    f"{_PLUGINS}/plugins/receipts/skills/receipts/SKILL.md": 1,
    "getsentry__skills/skills/create-branch/SKILL.md": 1,
    "getsentry__skills/skills/triage-frontend-issues/SKILL.md": 2,
}


def test_files_using_arguments_placeholders_load_with_the_body_intact() -> None:
    using = {
        r: parsed(r).body.count("$ARGUMENTS") for r in CORPUS if "$ARGUMENTS" in parsed(r).body
    }
    assert using == ARGUMENTS_FILES
    for relpath in ARGUMENTS_FILES:
        assert "$ARGUMENTS" not in skill(relpath).description
    hints = {r: skill(r).argument_hint for r in ARGUMENTS_FILES if skill(r).argument_hint}
    assert set(hints) == {
        f"{_PLUGINS}/plugins/example-plugin/skills/example-command/SKILL.md",
        "getsentry__skills/skills/create-branch/SKILL.md",
    }


def test_the_crlf_file_parses_like_an_lf_file() -> None:
    relpath = "K-Dense-AI__claude-scientific-skills/scientific-skills/geomaster/SKILL.md"
    assert b"\r\n" in (REAL_SKILLS / relpath).read_bytes()
    assert codes(relpath) == []
    assert "\r" not in parsed(relpath).body
    assert "\r" not in skill(relpath).description
    assert skill(relpath).name == "geomaster"


def test_context_fork_and_disabled_model_invocation_are_typed() -> None:
    fork = [r for r in CORPUS if parsed(r).skill is not None and skill(r).context == "fork"]
    assert fork == ["alirezarezvani__claude-skills/engineering/llm-wiki/skills/llm-wiki/SKILL.md"]
    disabled = [r for r in CORPUS if parsed(r).skill and skill(r).disable_model_invocation]
    assert len(disabled) == 24
    not_user = [r for r in CORPUS if parsed(r).skill and not skill(r).user_invocable]
    assert len(not_user) == 1
