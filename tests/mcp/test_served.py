"""A served view kept in the index: the next server over the same catalog takes its version
and paths back instead of working them out, and nothing else ever does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillpack.config._files import user_config_path
from skillpack.mcp import _served, _uris
from skillpack.mcp._pages import Pages
from skillpack.runtime._session import Session


@pytest.fixture
def tree(tmp_path: Path, write_skill: Any) -> Path:
    root = tmp_path / "skills"
    write_skill("alpha", base=root)
    write_skill("alpha/inner", base=root, name="inner")  # a nested skill: a longer path
    write_skill("beta", base=root)
    write_skill("one/same", base=root, name="same")
    write_skill("two/same", base=root, name="same")  # the same path twice: `~2`
    return root


@pytest.fixture
def worked_out(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Skill counts of every view whose paths were worked out (not taken back)."""
    seen: list[int] = []
    real = _uris.assign_paths

    def counting(skills: Any) -> Any:
        listed = list(skills)
        seen.append(len(listed))
        return real(listed)

    monkeypatch.setattr(_uris, "assign_paths", counting)
    return seen


def views(root: Path, runs: int) -> Iterator[_served.ServedCatalog]:
    """The served view of `runs` servers started one after the other over `root`."""
    for _ in range(runs):
        session = Session.open(
            cwd=str(root.parent),
            extra_roots=[str(root)],  # beside the user's scope: its config sets skills apart
            include_system=False,
            refresh="manual",
        )
        try:
            yield Pages(session).view()
        finally:
            session.close()


def test_the_third_server_over_an_unchanged_catalog_takes_the_view_back(
    tree: Path, worked_out: list[int]
) -> None:
    cold, warm, kept = views(tree, 3)
    assert worked_out == [5, 5], "the cold run keeps nothing; the first warm one keeps it"
    assert kept.version == warm.version == cold.version
    assert kept.path_of == warm.path_of == cold.path_of
    assert [kept.skill_uri(s) for s in kept.skills] == [cold.skill_uri(s) for s in cold.skills]
    assert kept.resolve(kept.skill_uri(kept.skills[1]))[0] == kept.skills[1]


def test_an_edit_is_a_new_view(tree: Path, write_skill: Any, worked_out: list[int]) -> None:
    *_, before = views(tree, 3)
    write_skill("gamma", base=tree)
    edited, again, kept = views(tree, 3)
    assert len(edited.skills) == len(before.skills) + 1
    assert edited.version != before.version
    assert worked_out == [5, 5, 6, 6], "the edit is worked out, kept, then taken back"
    assert kept.path_of == edited.path_of == again.path_of


def test_a_view_with_skills_set_apart_is_neither_kept_nor_taken_back(
    tree: Path, worked_out: list[int]
) -> None:
    config = user_config_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[skills]\ndisabled = ["beta"]\n')
    list(views(tree, 3))
    assert worked_out == [4, 4, 4]
    config.unlink()
    list(views(tree, 3))
    # Another config, another view to keep: the index holds the catalog as it is, so
    # the first server keeps it and the next two take it back.
    assert worked_out == [4, 4, 4, 5]


@pytest.mark.parametrize(
    "kept",
    [
        None,
        "not a pair",
        ("", ()),
        ("v1", (("/no/such/SKILL.md", ("user", "x")),)),
        ("v1", [("k", ["not", "a", "tuple"])]),
        (3, ()),
    ],
)
def test_a_kept_view_that_does_not_fit_is_worked_out_again(tree: Path, kept: Any) -> None:
    (view,) = views(tree, 1)
    assert _served._kept_parts(kept, view.skills) == (None, None)
    fits = _served.kept_view(view)
    version, paths = _served._kept_parts(fits, view.skills)
    assert version == view.version and paths == dict(view.path_of)
