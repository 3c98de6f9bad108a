"""The benchmark corpus generator and floor walker (bench/) make what they promise."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

BENCH = Path(__file__).resolve().parents[1] / "bench"
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gen_corpus = _load("gen_corpus")
floor = _load("floor")


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode("utf-8"))
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("corpus") / "c"
    return out, gen_corpus.generate(out, 200, seed=3, per_root=100)


def test_same_seed_writes_identical_trees_and_another_seed_does_not(tmp_path: Path) -> None:
    first = gen_corpus.generate(tmp_path / "a", 50, seed=7)
    second = gen_corpus.generate(tmp_path / "b", 50, seed=7)
    other = gen_corpus.generate(tmp_path / "c", 50, seed=8)
    assert first == second
    assert _tree_digest(tmp_path / "a") == _tree_digest(tmp_path / "b")
    assert _tree_digest(tmp_path / "a") != _tree_digest(tmp_path / "c")
    assert other["n_skills"] == 50


def test_corpus_is_split_into_roots_and_the_walk_finds_every_skill_but_no_decoy(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = corpus
    assert summary["roots"] == ["root-00", "root-01"]
    found = [p for root in summary["roots"] for p in floor.walk(str(out / str(root)))]
    all_skill_md = list(out.rglob("SKILL.md"))
    assert len(found) == 200
    assert len(all_skill_md) == 200 + summary["decoys"]
    assert not [p for p in found if "node_modules" in p or "/." in p or "assets" in p]


def test_broken_skills_are_two_percent_one_of_each_kind(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    _, summary = corpus
    assert summary["broken"] == dict.fromkeys(gen_corpus.BROKEN_KINDS, 1)
    assert summary["expected_listed"] == 196


@pytest.mark.parametrize("kind", gen_corpus.BROKEN_KINDS)
def test_every_broken_kind_is_an_error_for_skillpack(kind: str) -> None:
    from skillpack.parse._frontmatter import parse_skill

    text = gen_corpus._broken_text(kind, "some-skill", "Does things. " * 5, "# Title\n\nBody.\n")
    parsed = parse_skill(text, path="/c/some-skill/SKILL.md")
    assert parsed.skill is None, parsed.problems


def test_valid_skills_have_unique_kebab_names_matching_dirs_and_bounded_descriptions(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = corpus
    names = []
    for root in summary["roots"]:
        for path in floor.walk(str(out / str(root))):
            frontmatter = floor.split_frontmatter(Path(path).read_text(encoding="utf-8"))
            try:
                data = yaml.load(frontmatter or "", Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                continue
            if not isinstance(data, dict) or "description" not in data:
                continue
            names.append(data["name"])
            assert data["name"] == Path(path).parent.name
            assert 40 <= len(data["description"]) <= 600
            depth = len(Path(path).relative_to(out / str(root)).parts) - 1
            assert 2 <= depth <= 6
    assert len(names) == summary["expected_listed"]
    assert len(set(names)) == len(names)
    assert all(NAME_RE.match(n) and len(n) <= 64 for n in names)


def test_generate_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match="not empty"):
        gen_corpus.generate(tmp_path, 5)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: a\n---\nbody\n", "name: a"),
        ("---\ndescription: a---b\n---\n", "description: a---b"),
        ("---\nname: a\n---\n# T\n\n---\n\nmore\n", "name: a"),
        ("\ufeff---  \r\nname: a\r\n---\r\nbody", "name: a"),
        ("---\nname: a\n----\n---\n", "name: a\n----"),
        ("---\n---\nbody", ""),
        ("---\nname: a\nbody\n", None),
        ("# no frontmatter\n---\n", None),
    ],
    ids=[
        "plain",
        "dashes-in-value",
        "rule-in-body",
        "bom-crlf",
        "four-dashes",
        "empty",
        "unclosed",
        "none",
    ],
)
def test_floor_splits_frontmatter_only_at_a_line_that_is_exactly_three_dashes(
    text: str, expected: str | None
) -> None:
    assert floor.split_frontmatter(text) == expected


def test_the_catalog_ratio_targets_are_judged_at_ten_thousand_skills(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # as when run as a script: its `_common`
    catalog = _load("bench_catalog")
    imported = {"pass": True}
    small = {"targets": {"cold": catalog.target(1_000, 1.9, 1.25)}}
    large = {"targets": {"cold": catalog.target(10_000, 1.9, 1.25)}}
    assert small["targets"]["cold"] == {"max_ratio": 1.25, "pass": False, "applies": False}
    assert catalog.targets_pass([small], imported)
    assert not catalog.targets_pass([small, large], imported)
    assert not catalog.targets_pass([small], {"pass": False})
    passing = {"targets": {"warm": catalog.target(10_000, 0.25, 0.30)}}
    assert catalog.targets_pass([small, passing], imported)
