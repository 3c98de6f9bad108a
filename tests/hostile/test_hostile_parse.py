"""One hostile SKILL.md (or sidecar) never breaks the parser.

Huge integers, structures nested past any use, and merge-key chains that double at
each link are refused or kept as text with a problem; the interpreter survives (deep
nesting is parsed in a child process, where the old code segfaulted inside libyaml).
"""

from __future__ import annotations

import json

import pytest
from hostile_inputs import (
    deep_block,
    deep_flow,
    deep_indented,
    huge_hex,
    merge_chain,
    run_isolated,
    skill_text,
)

from skillpack.parse._codex import parse_codex_metadata
from skillpack.parse._fastyaml import load_simple
from skillpack.parse._frontmatter import parse_skill
from skillpack.parse._skill_json import skill_to_dict


def codes(parsed: object) -> list[str]:
    return [p.code for p in parsed.problems]  # type: ignore[attr-defined]


def test_integer_past_the_digit_limit_as_description_is_kept_as_its_text() -> None:
    text = skill_text(f"name: x\ndescription: {huge_hex()}")
    parsed = parse_skill(text, path="/s/x/SKILL.md")
    assert parsed.skill is not None
    assert parsed.skill.description == huge_hex()


def test_integer_past_the_digit_limit_under_metadata_serializes_as_json() -> None:
    text = skill_text(f"name: x\ndescription: d\nmetadata:\n  big: {huge_hex()}\n  n: 7")
    parsed = parse_skill(text, path="/s/x/SKILL.md")
    assert parsed.skill is not None
    data = json.loads(json.dumps(skill_to_dict(parsed.skill)))
    assert data["metadata"]["big"] == huge_hex()
    assert data["frontmatter"]["metadata"]["n"] == 7


@pytest.mark.parametrize(
    "value",
    [
        "1" * 5000,  # past int()'s digit limit
        "9" * 300,  # fits the limit, kept as text by the loader's integer rule
        "1_000" * 100,
    ],
)
def test_fast_path_gives_up_on_a_long_integer_instead_of_raising(value: str) -> None:
    assert load_simple(f"a: {value}") is None


def test_long_decimal_integer_as_description_loads_as_text() -> None:
    parsed = parse_skill(skill_text("name: x\ndescription: " + "1" * 5000), path="/s/x/SKILL.md")
    assert codes(parsed) == ["description-too-long"]  # not `yaml-invalid`
    assert parsed.skill is not None and parsed.skill.description == "1" * 5000


def test_short_integers_still_load_as_numbers() -> None:
    parsed = parse_skill(
        skill_text("name: x\ndescription: d\nmetadata:\n  a: 0x1f\n  b: 1_000\n  c: [12]"),
        path="/s/x/SKILL.md",
    )
    assert parsed.skill is not None
    # YAML 1.2 core schema: `1_000` is text, as Codex and Claude Code read it.
    assert parsed.skill.frontmatter["metadata"] == {"a": 31, "b": "1_000", "c": [12]}


DEEP = {
    "flow sequences": deep_flow(30_000),
    "flow mappings": deep_flow(30_000, "{"),
    "block sequences on one line": deep_block(30_000),
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_frontmatter_nested_30000_deep_is_refused_and_the_interpreter_survives(
    shape: str,
) -> None:
    text = skill_text("name: x\ndescription: d\n" + DEEP[shape])
    done = run_isolated(
        f"""
        from skillpack.parse._frontmatter import parse_skill
        parsed = parse_skill({text!r}, path="/s/x/SKILL.md")
        print(",".join(p.code for p in parsed.problems))
        """,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "frontmatter-too-large"


def test_codex_sidecar_nested_30000_deep_is_a_warning_and_the_interpreter_survives() -> None:
    done = run_isolated(
        f"""
        from skillpack.parse._frontmatter import parse_skill
        parsed = parse_skill(
            "---\\nname: x\\ndescription: d\\n---\\nbody\\n",
            path="/s/x/SKILL.md",
            codex_yaml={deep_flow(30_000)!r},
        )
        print(parsed.skill is not None, ",".join(p.code for p in parsed.problems))
        """,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "codex-yaml-invalid"]


def test_nesting_message_names_the_limit() -> None:
    parsed = parse_skill(skill_text("description: d\n" + deep_flow(500)), path="/s/x/SKILL.md")
    (problem,) = parsed.problems
    assert problem.code == "frontmatter-too-large"
    assert "64 levels" in problem.message


def test_deep_indentation_is_refused_by_the_nesting_limit() -> None:
    parsed = parse_skill(skill_text("description: d\n" + deep_indented(300)), path="/s/x/SKILL.md")
    assert codes(parsed) == ["frontmatter-too-large"]


def test_nesting_within_the_limit_still_loads() -> None:
    nested = "x: " + "[" * 60 + "1" + "]" * 60
    parsed = parse_skill(skill_text("description: d\n" + nested), path="/s/x/SKILL.md")
    assert parsed.skill is not None


def test_merge_key_chain_of_30_links_is_refused_quickly() -> None:
    text = skill_text("name: x\ndescription: d\n" + merge_chain(30))
    done = run_isolated(
        f"""
        from skillpack.parse._frontmatter import parse_skill
        parsed = parse_skill({text!r}, path="/s/x/SKILL.md")
        print(",".join(p.code for p in parsed.problems))
        """,
        timeout=20,
    )
    assert done.returncode == 0, "timed out" if done.returncode is None else done.stderr
    assert done.stdout.strip() == "frontmatter-too-large"


def test_merge_keys_of_ordinary_size_still_merge() -> None:
    text = skill_text(
        "description: d\nbase: &b {a: 1, b: 2}\nover:\n  <<: *b\n  b: 3\nchain: " + "{<<: [*b]}"
    )
    parsed = parse_skill(text, path="/s/x/SKILL.md")
    assert parsed.skill is not None
    assert parsed.skill.frontmatter["over"] == {"a": 1, "b": 3}
    assert parsed.skill.frontmatter["chain"] == {"a": 1, "b": 2}


def test_merged_mappings_give_the_same_values_under_every_pyyaml_release() -> None:
    # PyYAML 6.0.4 let the last merged mapping win and skipped pairs reached twice;
    # skillpack applies the merge rule itself: own keys, then the sources in order.
    text = skill_text(
        "description: d\nfirst: &f {shared: 1, only_first: 1}\n"
        "second: &s {shared: 2, only_second: 2}\n"
        "both:\n  <<: [*f, *s, *f]\n  w: 0\nbad:\n  <<: [1]\n"
    )
    parsed = parse_skill(text, path="/s/x/SKILL.md")
    assert [p.code for p in parsed.problems] == ["yaml-invalid"]
    parsed = parse_skill(text.replace("bad:\n  <<: [1]\n", ""), path="/s/x/SKILL.md")
    assert parsed.skill is not None
    both = parsed.skill.frontmatter["both"]
    assert both == {"shared": 1, "only_first": 1, "only_second": 2, "w": 0}


def test_codex_sidecar_merge_chain_is_a_warning() -> None:
    done = run_isolated(
        f"""
        from skillpack.parse._codex import parse_codex_metadata
        codex, problems = parse_codex_metadata({merge_chain(40)!r}, path="/s/openai.yaml")
        print(codex, ",".join(p.code for p in problems))
        """,
        timeout=20,
    )
    assert done.returncode == 0, "timed out" if done.returncode is None else done.stderr
    assert done.stdout.split() == ["None", "codex-yaml-invalid"]


def test_codex_sidecar_over_the_size_limit_is_a_warning() -> None:
    text = "interface:\n  items:\n" + "    - item\n" * 40_000
    codex, problems = parse_codex_metadata(text, path="/s/x/agents/openai.yaml")
    assert codex is None
    assert [p.code for p in problems] == ["codex-yaml-invalid"]
    assert "characters" in problems[0].message
