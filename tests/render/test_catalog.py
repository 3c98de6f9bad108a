"""The catalog: its formats, fitting it to the budget, shortening descriptions.

Rendered texts are compared exactly with snapshot files in `tests/render/snapshots/`
(see `skill_snapshots.py` for how to rewrite them after an intended change).
"""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
import yaml
from skill_snapshots import assert_snapshot, make_skill

from conftest import REAL_SKILLS
from skillpack._errors import UsageError
from skillpack._limits import BUDGET_CHARS
from skillpack._model import CodexMetadata, Skill
from skillpack.render._catalog import (
    MIN_DESCRIPTION_CHARS,
    CatalogReport,
    entry_chars,
    render_catalog,
    shorten,
)
from skillpack.render._formats import CatalogFormat, tail_text

FORMATS: tuple[CatalogFormat, ...] = ("xml", "markdown", "json")


SNAPSHOT_SKILLS = (
    make_skill(
        "pdf-forms",
        "Fill in PDF forms & read their fields. Use when a user hands over a PDF with "
        "<input> fields to complete.",
    ),
    make_skill(
        "release-notes",
        "Write release notes from merged pull requests.\n  Use when tagging a release.\n",
    ),
    make_skill("quote-check", 'Check "smart quotes" and back\\slashes in documentation.'),
    make_skill("deploy", "Deploy to production.", disable_model_invocation=True),
)


# -- formats --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_full_catalog_matches_snapshot(fmt: CatalogFormat) -> None:
    rendered = render_catalog(SNAPSHOT_SKILLS, format=fmt)
    assert rendered.format == fmt
    assert rendered.report == CatalogReport(
        budget_chars=BUDGET_CHARS, used_chars=len(rendered.text), total=3, shown=3
    )
    assert_snapshot(f"catalog.{fmt}.txt", rendered.text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_catalog_matches_snapshot(fmt: CatalogFormat) -> None:
    full = render_catalog(SNAPSHOT_SKILLS, format=fmt).text
    rendered = render_catalog(SNAPSHOT_SKILLS, format=fmt, budget_chars=len(full) - 1)
    assert rendered.report.truncated
    assert len(rendered.text) <= len(full) - 1
    assert_snapshot(f"catalog-truncated.{fmt}.txt", rendered.text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_catalog_without_preamble_or_location_matches_snapshot(fmt: CatalogFormat) -> None:
    rendered = render_catalog(SNAPSHOT_SKILLS, format=fmt, preamble=False, include_location=False)
    assert "/work/skills" not in rendered.text
    assert "skill_load" not in rendered.text
    assert_snapshot(f"catalog-bare.{fmt}.txt", rendered.text)


def test_xml_catalog_is_well_formed_and_escapes_text() -> None:
    text = render_catalog(SNAPSHOT_SKILLS, format="xml").text
    root = ET.fromstring(text[text.index("<available_skills>") :])
    descriptions = [s.findtext("description") for s in root.iter("skill")]
    assert descriptions[0] == SNAPSHOT_SKILLS[0].description
    assert (
        descriptions[1]
        == "Write release notes from merged pull requests. Use when tagging a release."
    )


def test_json_catalog_parses_to_the_skills_in_order() -> None:
    data = json.loads(render_catalog(SNAPSHOT_SKILLS, format="json").text)
    assert [s["name"] for s in data["skills"]] == ["pdf-forms", "release-notes", "quote-check"]
    assert data["skills"][2]["description"] == SNAPSHOT_SKILLS[2].description
    assert data["skills"][0]["location"] == "/work/skills/pdf-forms/SKILL.md"
    assert "skill_load" in data["instructions"]
    assert "truncated" not in data


def test_truncated_json_catalog_carries_the_notice_as_a_field() -> None:
    full = render_catalog(SNAPSHOT_SKILLS, format="json").text
    data = json.loads(
        render_catalog(SNAPSHOT_SKILLS, format="json", budget_chars=len(full) - 1).text
    )
    assert data["truncated"]["shown"] == 3
    assert data["truncated"]["total"] == 3
    assert "skill_search" in data["truncated"]["message"]


def test_skills_hidden_from_the_model_are_dropped_and_not_counted() -> None:
    hidden = make_skill(
        "hidden", "Never listed.", codex=CodexMetadata(allow_implicit_invocation=False)
    )
    rendered = render_catalog([*SNAPSHOT_SKILLS, hidden])
    assert "hidden" not in rendered.text
    assert "deploy" not in rendered.text
    assert rendered.report.total == 3


def test_no_skills_render_no_text() -> None:
    rendered = render_catalog([], format="markdown")
    assert rendered.text == ""
    assert rendered.report == CatalogReport(
        budget_chars=BUDGET_CHARS, used_chars=0, total=0, shown=0
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"budget_chars": -1}, "budget", id="negative-budget"),
        pytest.param({"format": "yaml"}, "Use one of: xml, markdown, json", id="unknown-format"),
    ],
)
def test_render_catalog_rejects_bad_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        render_catalog(SNAPSHOT_SKILLS, **kwargs)  # type: ignore[arg-type]


# -- budget ---------------------------------------------------------------------------
# Markdown without preamble or location has the simplest layout, so the expected texts
# below are built line by line; the notice comes from the renderer itself.

HEADER = "Available skills:\n\n"


def full_line(skill: Skill, description: str | None = None) -> str:
    return f"- **{skill.name}**: {description or skill.description}\n"


def name_line(skill: Skill) -> str:
    return f"- **{skill.name}**\n"


def notice(shown: int, total: int) -> str:
    return tail_text("markdown", shown, total, True)


def render_md(
    skills: list[Skill], budget: int, *, preamble: bool = False
) -> tuple[str, CatalogReport]:
    rendered = render_catalog(
        skills, format="markdown", budget_chars=budget, include_location=False, preamble=preamble
    )
    assert len(rendered.text) <= budget
    assert rendered.report.used_chars == len(rendered.text)
    return rendered.text, rendered.report


# Descriptions at the floor length cannot be shortened: over budget, they are dropped.
SHORT = [
    make_skill(n, f"Handles the {n} task. ".ljust(MIN_DESCRIPTION_CHARS, "x")) for n in "abcdefgh"
]


def test_catalog_that_fits_is_rendered_whole() -> None:
    expected = HEADER + "".join(full_line(s) for s in SHORT)
    text, report = render_md(SHORT, len(expected))
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected), used_chars=len(expected), total=8, shown=8
    )


def test_descriptions_are_shortened_evenly_to_the_largest_length_that_fits() -> None:
    skills = [
        make_skill("a", " ".join(["alpha"] * 60)),
        make_skill("b", " ".join(["bravo"] * 40)),
        make_skill("c", "Short one."),
    ]
    # 60 characters end on a word boundary in both long descriptions.
    expected = (
        HEADER
        + full_line(skills[0], shorten(skills[0].description, 60))
        + full_line(skills[1], shorten(skills[1].description, 60))
        + full_line(skills[2])
        + notice(3, 3)
    )
    text, report = render_md(skills, len(expected))
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=3,
        shown=3,
        shortened=("a", "b"),
        truncated=True,
    )


def test_lowest_ranked_entries_lose_their_descriptions_first() -> None:
    expected = (
        HEADER
        + full_line(SHORT[0])
        + full_line(SHORT[1])
        + "".join(name_line(s) for s in SHORT[2:])
        + notice(8, 8)
    )
    text, report = render_md(SHORT, len(expected))
    assert text == expected
    assert report.names_only == ("c", "d", "e", "f", "g", "h")
    assert (report.shown, report.shortened, report.omitted, report.truncated) == (8, (), (), True)

    _, tighter = render_md(SHORT, len(expected) - 1)
    assert tighter.names_only == ("b", "c", "d", "e", "f", "g", "h")


def test_descriptions_kept_beside_names_only_entries_are_cut_to_the_floor() -> None:
    beta = " ".join(["beta"] * 30)
    skills = [make_skill(n, beta) for n in ("a", "b", "c")]
    kept = shorten(beta, MIN_DESCRIPTION_CHARS)
    assert len(kept) == MIN_DESCRIPTION_CHARS
    expected = HEADER + full_line(skills[0], kept) + name_line(skills[1]) + name_line(skills[2])
    expected += notice(3, 3)
    text, report = render_md(skills, len(expected))
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=3,
        shown=3,
        shortened=("a",),
        names_only=("b", "c"),
        truncated=True,
    )


def test_lowest_ranked_entries_are_omitted_when_names_alone_do_not_fit() -> None:
    expected = HEADER + name_line(SHORT[0]) + name_line(SHORT[1]) + notice(2, 8)
    text, report = render_md(SHORT, len(expected))
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=8,
        shown=2,
        names_only=("a", "b"),
        omitted=("c", "d", "e", "f", "g", "h"),
        truncated=True,
    )


def test_tiny_budget_renders_only_the_notice_without_the_preamble() -> None:
    expected = HEADER + notice(0, 8)
    text, report = render_md(SHORT, len(expected), preamble=True)
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=8,
        shown=0,
        omitted=tuple("abcdefgh"),
        truncated=True,
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_too_small_for_the_notice_renders_nothing_but_reports_everything(
    fmt: CatalogFormat,
) -> None:
    rendered = render_catalog(SHORT, format=fmt, budget_chars=20)
    assert rendered.text == ""
    assert rendered.report == CatalogReport(
        budget_chars=20,
        used_chars=0,
        total=8,
        shown=0,
        omitted=tuple("abcdefgh"),
        truncated=True,
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_budget_is_respected_and_every_skill_accounted_for(fmt: CatalogFormat) -> None:
    rng = random.Random(5)
    # "\x07" is escaped by JSON only after a full scan: it exercises the exact re-render.
    words = ["use", "a&b", "<tag>", '"q"', "back\\slash", "naïve", "tab\there", "\x07", "x" * 45]
    for trial in range(25):
        skills = [
            make_skill(
                f"s{trial}-{i}", " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
            )
            for i in range(rng.randint(1, 12))
        ]
        location, preamble = rng.random() < 0.5, rng.random() < 0.5
        full = render_catalog(
            skills, format=fmt, budget_chars=10**9, include_location=location, preamble=preamble
        ).text
        for budget in {*(rng.randint(0, len(full)) for _ in range(15)), len(full), len(full) - 1}:
            rendered = render_catalog(
                skills,
                format=fmt,
                budget_chars=budget,
                include_location=location,
                preamble=preamble,
            )
            report = rendered.report
            assert len(rendered.text) == report.used_chars <= budget
            assert report.truncated == (budget < len(full))
            shown = [s.name for s in skills[: report.shown]]
            assert report.omitted == tuple(s.name for s in skills[report.shown :])
            assert set(report.shortened) <= set(shown)
            assert set(report.names_only) <= set(shown)
            assert not set(report.shortened) & set(report.names_only)
            if fmt == "json" and rendered.text:
                assert len(json.loads(rendered.text)["skills"]) == report.shown


def real_skills() -> list[Skill]:
    skills = []
    for path in sorted(REAL_SKILLS.rglob("SKILL.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        parts = text.split("\n---", 1) if text.startswith("---") else []
        try:
            data = yaml.safe_load(parts[0][3:]) if parts else None
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and isinstance(data.get("description"), str):
            name = str(data.get("name") or path.parent.name)
            skills.append(make_skill(name, data["description"]))
    return skills


@pytest.mark.corpus
@pytest.mark.parametrize("fmt", FORMATS)
def test_real_corpus_fits_the_default_budget_and_stays_well_formed(fmt: CatalogFormat) -> None:
    skills = real_skills()
    assert len(skills) > 300
    rendered = render_catalog(skills, format=fmt)
    report = rendered.report
    assert len(rendered.text) <= BUDGET_CHARS
    assert report.truncated
    assert report.shown + len(report.omitted) == len(skills)
    if fmt == "json":
        assert len(json.loads(rendered.text)["skills"]) == report.shown
    if fmt == "xml":
        root = ET.fromstring(rendered.text[rendered.text.index("<available_skills>") :])
        assert len(root.findall("skill")) == report.shown


# -- shortening and budget sources ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        pytest.param("fits exactly", 12, "fits exactly", id="fits"),
        pytest.param("one two three four", 10, "one two…", id="cut-at-space"),
        pytest.param("one two, three", 10, "one two…", id="trailing-comma-dropped"),
        pytest.param("Done. Then more", 8, "Done…", id="trailing-period-dropped"),
        pytest.param("abcdefghijklmnop", 6, "abcde…", id="long-word-cut-inside"),
        pytest.param("ab cdefghijklmnop", 8, "ab cdef…", id="space-too-early-ignored"),
        pytest.param("one two three", 8, "one two…", id="boundary-right-after-word"),
    ],
)
def test_shorten(text: str, limit: int, expected: str) -> None:
    assert shorten(text, limit) == expected
    assert len(shorten(text, limit)) <= limit


@pytest.mark.parametrize("budget", [100_000, 1000, 700, 600])
def test_json_catalog_entries_carry_their_scope_within_the_budget(budget: int) -> None:
    skills = [
        replace(
            make_skill(f"skill-{i}", f"Does thing {i}. Use when testing {i}."),
            scope=("repo", "user", "system")[i % 3],
        )
        for i in range(6)
    ]
    rendered = render_catalog(skills, format="json", budget_chars=budget)
    assert len(rendered.text) <= budget
    entries = json.loads(rendered.text)["skills"]
    assert entries, rendered.report
    by_name = {s.name: s.scope for s in skills}
    assert all(entry["scope"] == by_name[entry["name"]] for entry in entries)


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
def test_a_plugin_skill_is_listed_under_its_plugin_id(fmt: CatalogFormat) -> None:
    # Two `near` skills: a bare name means the plain one, so the plugin's is listed
    # as `geo:near` and a model asking for it names it so (issue 38).
    plain = make_skill("near", "Find nearby places.")
    plugin = replace(make_skill("near", "Nearest neighbours."), plugin="geo")
    text = render_catalog([plain, plugin], format=fmt).text
    assert "geo:near" in text
    assert text.count("near") - text.count("geo:near") >= 1
    # Sizing counts the name as listed.
    as_named = replace(plugin, plugin=None, name="geo:near")
    assert entry_chars([plugin], format=fmt) == entry_chars([as_named], format=fmt)
