"""Discovery over the real-world corpus: 398 SKILL.md files from 15 repositories.

Pins what the walk finds, that hidden folders (`.curated/`, `.system/`, `.claude/`,
`.github/`, ...) are skipped inside a root but discoverable as roots of their own,
and how same-name skills from different repositories collide.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from conftest import REAL_SKILLS
from skillpack._model import Catalog, Root
from skillpack.discovery._discover import discover, list_skill_files, read_body

pytestmark = pytest.mark.corpus

DEEP = 12  # the corpus nests skills up to 6 levels; leave room so no limit is hit


def corpus_catalog() -> Catalog:
    return discover(
        roots=[Root(path=str(REAL_SKILLS), scope="extra")], use_cache=False, max_depth=DEEP
    )


def skill_files_outside_hidden_folders(base: Path) -> list[str]:
    """An independent count: every SKILL.md whose folders below `base` are not hidden."""
    found = []
    for folder, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if "SKILL.md" in files:
            found.append(os.path.join(folder, "SKILL.md"))
    return found


def hidden_skill_folders() -> list[Path]:
    """Hidden folders of the corpus that hold skills, outermost only."""
    hidden = []
    for folder, dirs, _files in os.walk(REAL_SKILLS):
        for name in list(dirs):
            if name.startswith("."):
                path = Path(folder) / name
                if any(path.rglob("SKILL.md")):
                    hidden.append(path)
                dirs.remove(name)
    return sorted(hidden)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return corpus_catalog()


def test_the_whole_corpus_loads_without_exceptions_and_counts_are_pinned(catalog: Catalog) -> None:
    files = skill_files_outside_hidden_folders(REAL_SKILLS)
    errors = [p for p in catalog.problems if p.severity == "error"]

    assert len(files) == 385
    assert len(catalog) == 384
    assert [p.code for p in errors] == ["frontmatter-missing"]
    assert len(catalog) + len(errors) == len(files)
    assert {s.path for s in catalog.skills} | {p.path for p in errors} == set(files)
    assert not any(p.code == "walk-truncated" for p in catalog.problems)


def test_skills_under_hidden_folders_are_skipped_inside_a_root(catalog: Catalog) -> None:
    below_root = [Path(s.path).relative_to(REAL_SKILLS).parts for s in catalog.skills]

    assert not [parts for parts in below_root if any(p.startswith(".") for p in parts)]


def test_each_hidden_folder_discovered_as_a_root_finds_its_skills() -> None:
    hidden = hidden_skill_folders()
    names = [str(p.relative_to(REAL_SKILLS)) for p in hidden]
    assert names == [
        "expo__skills/.claude",
        "github__awesome-copilot/.github",
        "openai__skills/skills/.curated",
        "openai__skills/skills/.experimental",
        "openai__skills/skills/.system",
    ]

    counts = []
    for folder in hidden:
        found = discover(
            roots=[Root(path=str(folder), scope="extra")], use_cache=False, max_depth=DEEP
        )
        expected = skill_files_outside_hidden_folders(folder)
        assert sorted(s.path for s in found.skills) == sorted(expected)
        assert not [p for p in found.problems if p.severity == "error"]
        counts.append(len(found))

    assert counts == [1, 2, 6, 2, 2]


def duplicated_names(catalog: Catalog) -> dict[str, list[str]]:
    """Names held by more than one skill -> the repositories holding them."""
    repos: dict[str, list[str]] = {}
    for skill in catalog.skills:
        repos.setdefault(skill.name, []).append(Path(skill.path).relative_to(REAL_SKILLS).parts[0])
    return {name: sorted(r) for name, r in repos.items() if len(r) > 1}


def test_same_name_skills_in_one_root_are_reported_ambiguous(catalog: Catalog) -> None:
    duplicates = duplicated_names(catalog)
    ambiguous = Counter(
        p.message.split("'")[1] for p in catalog.problems if p.code == "name-ambiguous"
    )

    assert sorted(duplicates) == [
        "access",
        "brand-guidelines",
        "code-review",
        "configure",
        "frontend-design",
        "prompt-optimizer",
        "skill-creator",
    ]
    assert ambiguous == Counter(dict.fromkeys(duplicates, 1))
    for name in duplicates:
        assert len(catalog.winners(name)) == len(catalog.named(name))
        assert all(s.shadowed_by is None for s in catalog.named(name))
    assert not [p for p in catalog.problems if p.code == "name-shadowed"]


def test_same_name_skills_from_repos_given_as_ranked_roots_are_shadowed(catalog: Catalog) -> None:
    repos = sorted(p for p in REAL_SKILLS.iterdir() if p.is_dir())
    ranked = discover(
        roots=[Root(path=str(p), scope="extra", rank=i) for i, p in enumerate(repos)],
        use_cache=False,
        max_depth=DEEP,
    )

    assert len(ranked) == len(catalog)
    for name, holders in duplicated_names(catalog).items():
        candidates = ranked.named(name)
        winners = ranked.winners(name)
        first_repo = holders[0]
        assert {Path(w.path).relative_to(REAL_SKILLS).parts[0] for w in winners} == {first_repo}
        for skill in candidates:
            if skill in winners:
                assert skill.shadowed_by is None
            else:
                assert skill.shadowed_by == winners[0].path
        if len(set(holders)) == len(holders):  # one copy per repo: a clear winner
            assert len(winners) == 1
    shadowed = sorted(p.path for p in ranked.problems if p.code == "name-shadowed")
    assert shadowed == sorted(s.path for s in ranked.skills if s.shadowed_by)
    # Two plugins of one repo each ship `access` and `configure`: still a tie there.
    still_ambiguous = sorted(
        p.message.split("'")[1] for p in ranked.problems if p.code == "name-ambiguous"
    )
    assert still_ambiguous == sorted(
        name
        for name, holders in duplicated_names(catalog).items()
        if Counter(holders)[holders[0]] > 1
    )


def test_every_real_skill_body_and_file_listing_can_be_read(catalog: Catalog) -> None:
    for skill in catalog.skills:
        body = read_body(skill)
        files, truncated = list_skill_files(skill)
        assert len(body) == skill.body_chars
        assert "SKILL.md" not in files
        assert not truncated
