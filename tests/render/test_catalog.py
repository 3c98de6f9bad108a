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
from skillpack._model import SCOPE_RANK, CodexMetadata, Scope, Skill
from skillpack.render._catalog import (
    CATALOG_MODES,
    MIN_DESCRIPTION_CHARS,
    CatalogMode,
    CatalogReport,
    render_catalog,
    shorten,
)
from skillpack.render._formats import CatalogFormat, deferred_text, tail_text

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
    full = render_catalog(SNAPSHOT_SKILLS, format=fmt, include_location=False).text
    rendered = render_catalog(
        SNAPSHOT_SKILLS, format=fmt, budget_chars=len(full) - 1, include_location=False
    )
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
    full = render_catalog(SNAPSHOT_SKILLS, format="json", include_location=False).text
    data = json.loads(
        render_catalog(
            SNAPSHOT_SKILLS, format="json", budget_chars=len(full) - 1, include_location=False
        ).text
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
        pytest.param({"mode": "lazy"}, "Use one of: auto, full, deferred", id="unknown-mode"),
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
    skills: list[Skill],
    budget: int,
    *,
    preamble: bool = False,
    recent: dict[str, int] | None = None,
    mode: CatalogMode = "auto",
) -> tuple[str, CatalogReport]:
    rendered = render_catalog(
        skills,
        format="markdown",
        budget_chars=budget,
        include_location=False,
        preamble=preamble,
        recent=recent,
        mode=mode,
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
        description_chars=60,
    )


def by_rank(skills: list[Skill]) -> dict[str, int]:
    """A `recent` map that ranks `skills` in the order given (the first most recent)."""
    return {s.key: len(skills) - i for i, s in enumerate(skills)}


def more_tail(named: list[Skill], shown: int, total: int) -> str:
    return tail_text("markdown", shown, total, True, len(named), [s.name for s in named])


def test_lowest_ranked_entries_go_to_the_compact_list_of_names_first() -> None:
    expected = HEADER + full_line(SHORT[0]) + full_line(SHORT[1]) + more_tail(SHORT[2:], 8, 8)
    text, report = render_md(SHORT, len(expected), recent=by_rank(SHORT))
    assert text == expected
    assert report.names_only == ("c", "d", "e", "f", "g", "h")
    assert (report.shown, report.shortened, report.omitted, report.truncated) == (8, (), (), True)
    assert report.shown_as == ("full", "full", *["name_only"] * 6)

    _, tighter = render_md(SHORT, len(expected) - 1, recent=by_rank(SHORT))
    assert tighter.names_only == ("b", "c", "d", "e", "f", "g", "h")


def test_rank_is_recent_use_then_scope_never_the_alphabet() -> None:
    scopes: dict[str, Scope] = {"b": "repo", "g": "user"}
    skills = [replace(s, scope=scopes.get(s.name, "system")) for s in SHORT]
    by_name = {s.name: s for s in skills}
    # Room for two descriptions: the repo and the user skill keep theirs; a skill
    # used in the session ranks before both, whatever its name and scope.
    for used, kept in ((None, "bg"), ("h", "bh"), ("a", "ab")):
        described = [s for s in skills if s.name in kept]
        named = [s for s in skills if s.name not in kept]
        expected = HEADER + "".join(map(full_line, described)) + more_tail(named, 8, 8)
        recent = {by_name[used].key: 1} if used else None
        text, report = render_md(skills, len(expected), recent=recent)
        assert text == expected, used
        assert report.names_only == tuple(s.name for s in named)


def test_descriptions_kept_beside_names_only_entries_are_cut_to_the_floor() -> None:
    beta = " ".join(["beta"] * 30)
    skills = [make_skill(n, beta) for n in ("a", "b", "c")]
    kept = shorten(beta, MIN_DESCRIPTION_CHARS)
    assert len(kept) == MIN_DESCRIPTION_CHARS
    expected = HEADER + full_line(skills[0], kept) + more_tail(skills[1:], 3, 3)
    text, report = render_md(skills, len(expected), recent=by_rank(skills))
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=3,
        shown=3,
        shortened=("a",),
        names_only=("b", "c"),
        truncated=True,
        description_chars=MIN_DESCRIPTION_CHARS,
    )


def test_descriptions_beside_names_only_entries_take_the_room_left() -> None:
    beta = " ".join(["beta"] * 30)
    skills = [make_skill(n, beta) for n in ("a", "b", "c")]
    longer = shorten(beta, 60)
    expected = HEADER + full_line(skills[0], longer) + more_tail(skills[1:], 3, 3)
    text, report = render_md(skills, len(expected), recent=by_rank(skills))
    assert text == expected
    assert report.description_chars == 60


LONG_NAMES = [make_skill(f"{n}-skill-with-a-long-name", "Does {n}.") for n in "abcdefgh"]


def test_lowest_ranked_entries_are_omitted_only_in_the_full_mode() -> None:
    skills = LONG_NAMES
    expected = HEADER + more_tail(skills[:2], 2, 8)
    text, report = render_md(skills, len(expected), recent=by_rank(skills), mode="full")
    assert text == expected
    assert report == CatalogReport(
        budget_chars=len(expected),
        used_chars=len(expected),
        total=8,
        shown=2,
        names_only=tuple(s.name for s in skills[:2]),
        omitted=tuple(s.name for s in skills[2:]),
        truncated=True,
    )
    # `auto` renders the same when the deferred stub does not fit either.
    assert render_md(skills, len(expected), recent=by_rank(skills)) == (text, report)
    stub = deferred_text("markdown", 8)
    text, report = render_md(skills, len(stub), recent=by_rank(skills))
    assert text == stub
    assert report.deferred
    assert report.omitted == tuple(s.name for s in skills)


@pytest.mark.parametrize("fmt", FORMATS)
def test_ten_skills_in_400_characters_are_all_named(fmt: CatalogFormat) -> None:
    skills = [make_skill(f"tool-{i}", f"Does the {i} job well. " * 3) for i in range(10)]
    rendered = render_catalog(skills, format=fmt, budget_chars=400)
    assert len(rendered.text) <= 400
    assert rendered.report.shown == 10
    assert all(s.name in rendered.text for s in skills)
    assert rendered.report.omitted == ()


def test_a_preamble_that_leaves_no_room_for_the_names_is_dropped() -> None:
    expected = HEADER + more_tail(SHORT, 8, 8)
    text, report = render_md(SHORT, len(expected), preamble=True)
    assert text == expected
    assert report.names_only == tuple("abcdefgh")


@pytest.mark.parametrize("fmt", FORMATS)
def test_budget_too_small_for_the_stub_renders_nothing_but_reports_everything(
    fmt: CatalogFormat,
) -> None:
    for mode in CATALOG_MODES:
        rendered = render_catalog(SHORT, format=fmt, budget_chars=20, mode=mode)
        assert rendered.text == ""
        assert rendered.report == CatalogReport(
            budget_chars=20,
            used_chars=0,
            total=8,
            shown=0,
            omitted=tuple("abcdefgh"),
            truncated=True,
            deferred=mode == "deferred",
        )


# -- locations, the deferred catalog ----------------------------------------------------

DEEP = [
    make_skill(n, f"Handles the {n} task, when a user asks for {n}. " * 2)
    for n in ("alpha", "bravo", "charlie", "delta")
]
DEEP = [replace(s, path=f"/home/someone/projects/shared/skills/{s.name}/SKILL.md") for s in DEEP]


@pytest.mark.parametrize("fmt", FORMATS)
def test_locations_go_before_any_description_when_the_model_has_skill_load(
    fmt: CatalogFormat,
) -> None:
    full = render_catalog(DEEP, format=fmt, budget_chars=10**6).text
    rendered = render_catalog(DEEP, format=fmt, budget_chars=len(full) - 1)
    report = rendered.report
    assert report.locations_dropped
    assert "SKILL.md" not in rendered.text
    assert (report.shortened, report.names_only, report.truncated) == ((), (), False)
    assert report.shown_as == ("full",) * 4
    assert_snapshot(f"catalog-no-locations.{fmt}.txt", rendered.text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_skill_load_the_common_location_base_is_stated_once(
    fmt: CatalogFormat,
) -> None:
    full = render_catalog(DEEP, format=fmt, budget_chars=10**6, skill_load=False).text
    rendered = render_catalog(DEEP, format=fmt, budget_chars=len(full) - 1, skill_load=False)
    report = rendered.report
    assert report.location_base == "/home/someone/projects/shared/skills/"
    assert rendered.text.count("/home/someone") == 1
    assert "alpha/SKILL.md" in rendered.text
    assert not report.truncated
    assert_snapshot(f"catalog-location-base.{fmt}.txt", rendered.text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_skill_load_entries_keep_their_location_when_they_lose_descriptions(
    fmt: CatalogFormat,
) -> None:
    full = render_catalog(DEEP, format=fmt, budget_chars=10**6, skill_load=False).text
    budget = len(full) * 2 // 3
    rendered = render_catalog(DEEP, format=fmt, budget_chars=budget, skill_load=False)
    report = rendered.report
    assert report.names_only
    assert all(f"{s.name}/SKILL.md" in rendered.text for s in DEEP)
    assert len(rendered.text) <= budget


@pytest.mark.parametrize("fmt", FORMATS)
def test_compact_names_match_snapshot(fmt: CatalogFormat) -> None:
    rendered = render_catalog(DEEP, format=fmt, budget_chars=620, recent=by_rank(DEEP))
    assert rendered.report.names_only
    assert len(rendered.text) <= 620
    assert_snapshot(f"catalog-names.{fmt}.txt", rendered.text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_deferred_catalog_matches_snapshot_and_names_skill_search(fmt: CatalogFormat) -> None:
    rendered = render_catalog(DEEP, format=fmt, mode="deferred")
    assert "skill_search" in rendered.text
    assert rendered.report.deferred
    assert rendered.report.shown == 0
    assert rendered.report.omitted == tuple(s.name for s in DEEP)
    assert_snapshot(f"catalog-deferred.{fmt}.txt", rendered.text)
    if fmt == "json":
        assert json.loads(rendered.text)["deferred"] == {"total": 4}


def test_auto_defers_only_when_even_the_names_do_not_fit() -> None:
    many = [make_skill(f"generated-skill-{i:04}", "Does one thing.") for i in range(3000)]
    rendered = render_catalog(many, format="markdown")
    assert rendered.report.deferred
    assert rendered.text == deferred_text("markdown", 3000)
    full = render_catalog(many, format="markdown", mode="full")
    assert not full.report.deferred
    assert 0 < full.report.shown < 3000
    assert len(full.text) <= BUDGET_CHARS
    named = render_catalog(many[:300], format="markdown")
    assert named.report.shown == 300
    assert not named.report.deferred


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_budget_is_respected_and_every_skill_accounted_for(fmt: CatalogFormat) -> None:
    rng = random.Random(5)
    # "\x07" is escaped by JSON only after a full scan: it exercises the exact re-render.
    words = ["use", "a&b", "<tag>", '"q"', "back\\slash", "naïve", "tab\there", "\x07", "x" * 45]
    scopes: tuple[Scope, ...] = ("repo", "user", "system")
    for trial in range(25):
        skills = [
            replace(
                make_skill(
                    f"s{trial}-{i}", " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
                ),
                scope=rng.choice(scopes),
            )
            for i in range(rng.randint(1, 12))
        ]
        location, preamble = rng.random() < 0.5, rng.random() < 0.5
        skill_load, mode = rng.random() < 0.5, rng.choice(CATALOG_MODES)
        options = {
            "format": fmt,
            "include_location": location,
            "preamble": preamble,
            "skill_load": skill_load,
            "mode": mode,
        }
        full = render_catalog(skills, budget_chars=10**9, **options).text  # type: ignore[arg-type]
        for budget in {*(rng.randint(0, len(full)) for _ in range(15)), len(full), len(full) - 1}:
            rendered = render_catalog(skills, budget_chars=budget, **options)  # type: ignore[arg-type]
            report = rendered.report
            assert len(rendered.text) == report.used_chars <= budget
            if report.truncated:
                assert budget < len(full) or mode == "deferred"
            states = dict(zip((s.name for s in skills), report.shown_as, strict=True))
            assert report.omitted == tuple(n for n, st in states.items() if st == "omitted")
            assert report.shortened == tuple(n for n, st in states.items() if st == "shortened")
            assert report.names_only == tuple(n for n, st in states.items() if st == "name_only")
            assert report.shown == len(skills) - len(report.omitted)
            if report.names_only and not report.deferred:
                # Nothing loses its description while an entry keeps a location it
                # does not need.
                assert not (location and skill_load) or "SKILL.md" not in rendered.text
            ranks = {s.name: SCOPE_RANK[s.scope] for s in skills}
            described = [ranks[n] for n, st in states.items() if st in ("full", "shortened")]
            reduced = [ranks[n] for n, st in states.items() if st in ("name_only", "omitted")]
            if described and reduced:
                assert max(described) <= min(reduced)
            if fmt == "json" and rendered.text:
                data = json.loads(rendered.text)
                listed = len(data["skills"]) + len(data.get("more_skills", []))
                assert listed == report.shown


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
    assert report.locations_dropped
    assert (report.shown, report.omitted) == (len(skills), ())
    if fmt == "json":
        data = json.loads(rendered.text)
        assert len(data["skills"]) + len(data["more_skills"]) == report.shown
    if fmt == "xml":
        root = ET.fromstring(rendered.text[rendered.text.index("<available_skills>") :])
        more = root.findtext("more_skills") or ""
        assert len(root.findall("skill")) + len(more.split(", ")) == report.shown


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


@pytest.mark.parametrize("budget", [100_000, 1000, 700])
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


def test_without_a_shared_folder_locations_stay_absolute_and_descriptions_shorten() -> None:
    skills = [
        replace(DEEP[0], path="/alpha/SKILL.md"),
        replace(DEEP[1], path="/var/bravo/SKILL.md"),
    ]
    full = render_catalog(skills, format="markdown", budget_chars=10**6, skill_load=False).text
    rendered = render_catalog(
        skills, format="markdown", budget_chars=len(full) - 10, skill_load=False
    )
    report = rendered.report
    assert report.location_base is None and not report.locations_dropped
    assert report.shortened and "/var/bravo/SKILL.md" in rendered.text
