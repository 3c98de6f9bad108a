"""`DiscoveryOptions`: one frozen value for what discovery searches and how, checked
when it is made, equal to the keywords it replaces."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest

import skillpack
import skillpack.discovery
import skillpack.types
from conftest import WriteSkill
from skillpack import DiscoveryOptions, Root, UsageError, discover
from skillpack._limits import MAX_DEPTH, MAX_DIRS, MAX_SKILL_FILE_BYTES
from skillpack.discovery._discover import discover_roots
from skillpack.discovery._roots import chosen_roots, default_roots


def _made_with(field: str, value: object) -> DiscoveryOptions:
    """Make options with one field set to a value its annotation may not admit."""
    arguments: dict[str, Any] = {field: value}
    return DiscoveryOptions(**arguments)


def test_one_class_is_public_from_skillpack_types_and_discovery() -> None:
    assert skillpack.types.DiscoveryOptions is DiscoveryOptions
    assert skillpack.discovery.DiscoveryOptions is DiscoveryOptions
    assert "DiscoveryOptions" in skillpack.__all__


def test_it_is_frozen_keyword_only_and_hashable() -> None:
    options = DiscoveryOptions(extra_roots=["a", Path("b")], note_paths=[Path("c/d.py")])
    assert options.extra_roots == ("a", "b")
    assert options.note_paths == ("c/d.py",)
    assert hash(options) == hash(DiscoveryOptions(extra_roots=("a", "b"), note_paths=["c/d.py"]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_dirs = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        DiscoveryOptions(["a"])  # type: ignore[call-arg]


def test_equal_fields_make_equal_values_and_one_field_tells_them_apart() -> None:
    assert DiscoveryOptions() == DiscoveryOptions()
    assert DiscoveryOptions(max_dirs=10) == DiscoveryOptions(max_dirs=10)
    assert DiscoveryOptions(max_dirs=10) != DiscoveryOptions(max_dirs=11)
    assert DiscoveryOptions(include_admin=False) != DiscoveryOptions()
    assert len({DiscoveryOptions(), DiscoveryOptions(), DiscoveryOptions(strict=True)}) == 2


def test_folders_given_as_roots_become_extra_root_values(tmp_path: Path) -> None:
    given = Root(path=str(tmp_path / "given"), scope="repo", rank=3)
    options = DiscoveryOptions(roots=[given, tmp_path / "a", str(tmp_path / "b")])
    assert options.root_values == (
        given,
        Root(path=str(tmp_path / "a"), scope="extra", rank=1),
        Root(path=str(tmp_path / "b"), scope="extra", rank=2),
    )
    assert DiscoveryOptions().root_values is None


def test_the_defaults_are_the_defaults_of_discover() -> None:
    """A field left to the config (None) walks with the built-in bound, as `discover` does."""
    keywords = inspect.signature(discover).parameters
    defaults = DiscoveryOptions()
    for field in dataclasses.fields(DiscoveryOptions):
        assert field.name in keywords, field.name
        if field.name in {"max_depth", "max_dirs", "repo_skills_dir", "folders_off"}:
            continue  # None here: the config's value where one is read
        assert getattr(defaults, field.name) == keywords[field.name].default, field.name
    assert defaults.limits == (MAX_DEPTH, MAX_DIRS, MAX_SKILL_FILE_BYTES, False)
    assert keywords["max_depth"].default == MAX_DEPTH
    assert keywords["max_dirs"].default == MAX_DIRS
    assert keywords["repo_skills_dir"].default is False
    assert defaults.repo_skills_dir is None
    assert keywords["folders_off"].default == ()
    assert defaults.folders_off is None


@pytest.mark.parametrize("field", ["extra_roots", "note_paths"])
@pytest.mark.parametrize("one", ["skills", Path("skills")], ids=["str", "path"])
def test_one_path_where_a_list_belongs_is_refused_with_the_list_to_write(
    field: str, one: str | Path
) -> None:
    with pytest.raises(UsageError, match=rf"{field}=\.\.\.\).*write {field}=\['skills'\]"):
        _made_with(field, one)


@pytest.mark.parametrize("field", ["extra_roots", "note_paths"])
def test_an_item_that_is_no_path_is_refused(field: str) -> None:
    with pytest.raises(UsageError, match=rf"{field}=\.\.\.\) got int 3 at index 1"):
        _made_with(field, ["ok", 3])


@pytest.mark.parametrize(
    ("field", "value", "least"),
    [
        ("max_dirs", 0, 1),
        ("max_dirs", -5, 1),
        ("max_file_bytes", 0, 1),
        ("max_depth", -1, 0),
    ],
)
def test_a_bound_below_its_least_is_refused_naming_the_field(
    field: str, value: int, least: int
) -> None:
    with pytest.raises(UsageError, match=rf"{field}=\.\.\.\) got {value}.*{field}={least} or more"):
        _made_with(field, value)


def test_the_least_bounds_are_accepted() -> None:
    # max_depth=0 is meaningful (the root folder alone), as on the command line.
    assert DiscoveryOptions(max_depth=0, max_dirs=1, max_file_bytes=1).limits == (0, 1, 1, False)


@pytest.mark.parametrize("field", ["max_dirs", "max_depth", "max_file_bytes"])
def test_a_bound_that_is_no_whole_number_is_refused(field: str) -> None:
    with pytest.raises(UsageError, match=rf"{field}=\.\.\.\) takes a whole number"):
        _made_with(field, "10")
    with pytest.raises(UsageError, match=rf"{field}=\.\.\.\) takes a whole number"):
        _made_with(field, True)


def test_refusals_name_the_keyword_of_the_call_they_came_through() -> None:
    with pytest.raises(UsageError, match=r"^discover\(extra_roots=\.\.\.\)"):
        discover(extra_roots="skills", use_cache=False)
    with pytest.raises(UsageError, match=r"^discover\(max_dirs=\.\.\.\) got 0"):
        discover(max_dirs=0, use_cache=False)


def _tree(tmp_path: Path, write_skill: WriteSkill) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    write_skill("pdf", base=project / ".agents" / "skills")
    write_skill("deep/er/still/charts", base=project / ".agents" / "skills")
    write_skill("tool", base=project / "skills")
    extra = tmp_path / "extra"
    write_skill("pdf", base=extra, description="Another pdf. Use when testing.")
    return project, extra


def test_discover_with_options_equals_discover_with_the_keywords(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _tree(tmp_path, write_skill)
    keywords: dict[str, Any] = dict(
        extra_roots=[str(extra)],
        include_user=False,
        include_system=False,
        include_admin=False,
        repo_skills_dir=True,
        max_depth=2,
        max_dirs=50,
        use_cache=False,
    )
    by_keywords = discover(cwd=str(project), **keywords)
    by_options = discover(cwd=str(project), options=DiscoveryOptions(**keywords))
    assert by_options == by_keywords
    assert {s.name for s in by_options.skills} == {"pdf", "tool"}  # charts is too deep
    assert any(p.code == "walk-truncated" for p in by_options.problems)
    # Not the defaults: the options did reach the walk.
    assert discover(cwd=str(project), use_cache=False, include_user=False) != by_options


def test_discover_roots_and_default_roots_take_the_same_value(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _tree(tmp_path, write_skill)
    options = DiscoveryOptions(
        extra_roots=[str(extra)], include_user=False, include_system=False, use_cache=False
    )
    roots = default_roots(options, cwd=str(project))
    assert [r.scope for r in roots] == ["repo", "extra"]
    assert chosen_roots(options, cwd=str(project)) == roots
    run = discover_roots(roots, options=options)
    assert run.catalog == discover(cwd=str(project), options=options)
    assert run.limits == options.limits


def test_given_roots_replace_the_default_ones_and_extra_roots_follow(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, extra = _tree(tmp_path, write_skill)
    options = DiscoveryOptions(roots=[project / "skills"], extra_roots=[str(extra)])
    assert [(r.path, r.rank) for r in chosen_roots(options, cwd=str(project))] == [
        (str(project / "skills"), 0),
        (str(extra), 1),
    ]


def test_a_keyword_given_beside_options_fills_a_field_they_leave_alone(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    project, _extra = _tree(tmp_path, write_skill)
    options = DiscoveryOptions(include_user=False, include_system=False, use_cache=False)
    merged = discover(cwd=str(project), max_depth=2, options=options)
    assert merged == discover(cwd=str(project), options=dataclasses.replace(options, max_depth=2))
    # The same value given both ways is no conflict.
    same = discover(cwd=str(project), include_user=False, options=options)
    assert same == discover(cwd=str(project), options=options)


def test_a_keyword_that_differs_from_the_options_is_refused_naming_both() -> None:
    options = DiscoveryOptions(max_dirs=10, use_cache=False)
    with pytest.raises(UsageError, match=r"discover\(\) got max_dirs=20 and options\.max_dirs=10"):
        discover(max_dirs=20, options=options)
    with pytest.raises(UsageError, match=r"takes a skillpack\.DiscoveryOptions, not dict"):
        discover(options={"max_dirs": 10})  # type: ignore[arg-type]
