"""Qualified ids always resolve: every id or path a warning or diagnostic offers picks
exactly the skill it stands for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillpack._model import Catalog, Root, Skill
from skillpack.discovery._discover import discover
from skillpack.runtime._workspace import lookup_skill
from skillpack.select._refs import SkillRefs, ref_matches
from skillpack.select._resolve import find_skill, resolve_message, suggest

_LINK = re.compile(r"\[\$[^\]]+\]\([^)]+\)")
_MENTION = re.compile(r"(?<![\w\[])\$[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*")
_QUALIFIED = re.compile(r"(?<![\w/$-])[a-z0-9-]+:[a-z0-9-]+")
_SKILL_PATH = re.compile(r"/\S*?/SKILL\.md")


def _skill(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Does {name}.\n---\nBody of {folder}.\n",
        encoding="utf-8",
    )


def _plugin(folder: Path, name: str, skills: tuple[str, ...]) -> None:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name}), encoding="utf-8"
    )
    for skill in skills:
        _skill(folder / "skills" / skill, skill)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    repo, user = tmp_path / "repo", tmp_path / "user"
    _skill(repo / "lint", "lint")  # a plain repo skill beside a plugin's `lint`
    _plugin(repo / "tools", "tools", ("lint",))
    _skill(repo / "a" / "twin", "twin")  # two of one name in one root: a tie
    _skill(repo / "b" / "twin", "twin")
    _plugin(repo / "repo-plugin", "repo", ("clash",))  # a plugin named like the scope
    _skill(repo / "clash", "clash")
    _plugin(repo / "alpha", "alpha", ("foo",))  # two plugins of one name: a tie
    _plugin(repo / "beta", "beta", ("foo",))
    _skill(user / "lint", "lint")  # shadowed by the repo's
    _skill(user / "twin", "twin")
    return discover(
        roots=[Root(path=str(repo), scope="repo"), Root(path=str(user), scope="user")],
        use_cache=False,
    )


def _by_path(catalog: Catalog, path: str) -> Skill:
    skill = catalog.at_path(path)
    assert skill is not None, path
    return skill


def _picks(catalog: Catalog, form: str) -> Skill:
    """The one skill a typed form (`$id`, `/id`, `[$x](path)`, an id or a path) picks."""
    if form.startswith("/") and not form.endswith("SKILL.md"):
        resolution = resolve_message(f"{form} go", catalog)
    elif form.startswith(("$", "[")):
        resolution = resolve_message(f"{form} go", catalog, multi_mention="all")
    elif form.startswith("/"):
        return find_skill(catalog, path=form)
    else:
        found = find_skill(catalog, name=form)
        assert lookup_skill(catalog, form) == found, form
        return found
    assert resolution.diagnostics == (), (form, resolution.diagnostics)
    (activation,) = resolution.activations
    return activation.skill


def test_a_scope_id_names_only_the_skills_of_that_scope_outside_plugins(catalog: Catalog) -> None:
    (plain,) = catalog.qualified("repo:lint")
    assert plain.plugin is None
    (plugin,) = catalog.qualified("tools:lint")
    assert plugin.plugin == "tools"
    assert _picks(catalog, "$repo:lint") == plain
    assert _picks(catalog, "$tools:lint") == plugin
    assert lookup_skill(catalog, "repo:lint") == plain


def test_every_id_or_path_a_collision_warning_offers_picks_a_skill_of_that_name(
    catalog: Catalog,
) -> None:
    offered = 0
    for problem in catalog.problems:
        assert problem.code in ("name-ambiguous", "name-shadowed"), problem
        name = re.search(r"'([^']+)'", problem.message)
        assert name is not None
        picked: set[str] = set()
        for form in _QUALIFIED.findall(problem.message) + _SKILL_PATH.findall(problem.message):
            skill = _picks(catalog, form)
            assert skill.name == name.group(1), (problem.message, form)
            picked.add(skill.key)
            offered += 1
        if problem.code == "name-ambiguous":
            ties = catalog.winners(name.group(1))
            assert picked == {s.key for s in ties}, problem.message
        else:
            assert _by_path(catalog, problem.path).key in picked, problem.message
    assert offered >= 7  # 8 before: a plugin skill no longer collides with a bare one


@pytest.mark.parametrize("sigil", ["$", "/"])
@pytest.mark.parametrize("name", ["twin", "foo"])
def test_every_form_a_tie_diagnostic_offers_picks_one_of_the_tied_skills(
    catalog: Catalog, sigil: str, name: str
) -> None:
    (diagnostic,) = resolve_message(f"{sigil}{name} go", catalog).diagnostics
    assert diagnostic.kind == "ambiguous"
    forms = _LINK.findall(diagnostic.message) + _MENTION.findall(diagnostic.message)
    forms += re.findall(rf"(?<![\w\[$]){sigil}[a-z0-9-]+:[a-z0-9-]+", diagnostic.message)
    picked = {_picks(catalog, form).key for form in forms if form != f"{sigil}{name}"}
    assert picked == {s.key for s in catalog.winners(name)}, diagnostic.message
    for candidate in diagnostic.candidates:
        assert _picks(catalog, candidate).key in picked


def test_every_suggestion_and_using_line_is_a_working_id(catalog: Catalog) -> None:
    for skill in catalog.skills:
        resolution = resolve_message(f"[${skill.name}]({skill.path}) go", catalog)
        (line,) = resolution.lines
        shown = line.removeprefix("Using skill: ")
        assert _picks(catalog, shown) == skill
    for query in ("lin", "twi", "clas", "tools:lin", "repo:clas"):
        for suggestion in suggest(query, catalog):
            assert _picks(catalog, suggestion).name in suggestion or suggestion.endswith("SKILL.md")


def test_an_exact_config_entry_follows_the_resolver_and_a_glob_covers_the_scope(
    catalog: Catalog,
) -> None:
    plain, plugin = catalog.qualified("repo:lint")[0], catalog.qualified("tools:lint")[0]
    refs = SkillRefs.of(["repo:lint"])
    assert refs.matches(plain) and not refs.matches(plugin)
    # A permission glob selects a set: `repo:*` still covers the repo's plugin skills.
    assert ref_matches("repo:*", plugin, glob=True)
    assert not ref_matches("repo:lint", plugin)


@pytest.mark.parametrize("form", ["$clash", "/clash", "clash"])
def test_a_bare_name_means_the_skill_outside_plugins(catalog: Catalog, form: str) -> None:
    # `repo:clash` (a plugin named like the scope) and a plain `clash`: the bare name
    # is the plain one's, no longer a tie.
    skill = _picks(catalog, form)
    assert (skill.name, skill.plugin) == ("clash", None)
    assert catalog.winners("clash") == (skill,)


def test_a_bare_name_only_a_plugin_has_still_picks_that_plugin_skill(tmp_path: Path) -> None:
    _plugin(tmp_path / "geo", "geo", ("near",))
    catalog = discover(roots=[Root(path=str(tmp_path), scope="repo")], use_cache=False)
    (skill,) = catalog.skills
    assert _picks(catalog, "$near") == skill == _picks(catalog, "near")
    assert _picks(catalog, "$geo:near") == skill
