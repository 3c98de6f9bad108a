"""Resolving mentions, links and slash commands against a catalog (design rules:
selecting skills)."""

from __future__ import annotations

from typing import Any

import pytest

from skillpack._errors import (
    AmbiguousSkillError,
    SkillDisabledError,
    SkillNotFoundError,
    UsageError,
)
from skillpack._model import Catalog, CodexMetadata, Problem, Scope, Skill
from skillpack.parse._frontmatter import parse_skill
from skillpack.select._collisions import resolve_collisions
from skillpack.select._resolve import (
    FUZZY_LOOKUPS_PER_MESSAGE,
    Activation,
    Diagnostic,
    Resolution,
    find_skill,
    only_scopes_tools,
    resolve_message,
    suggest,
)

REPO = "/proj/.agents/skills"
USER = "/home/me/.agents/skills"


def make(
    name: str,
    *,
    scope: Scope = "repo",
    plugin: str | None = None,
    folder: str | None = None,
    rank: int = 0,
    **fields: Any,
) -> Skill:
    base = {"repo": REPO, "user": USER}.get(scope, f"/{scope}")
    if plugin:
        base = f"{base}/{plugin}/skills"
    directory = f"{base}/{folder or name}"
    return Skill(
        name=name,
        description=f"The {name} skill.",
        path=f"{directory}/SKILL.md",
        dir=directory,
        real_path=f"{directory}/SKILL.md",
        scope=scope,
        rank=rank,
        plugin=plugin,
        **fields,
    )


SKILLS = (
    # the catalog the seed's UX table implies
    make("systematic-debugging"),
    make("root-cause-debugging"),
    make("systematic-debugging", scope="user", plugin="superpowers"),
    make("gh-fix-ci", scope="user", plugin="github"),
    make("test-driven-development"),
    make("aleph"),
    # precedence: the repo copy shadows the user copy
    make("pdf-forms"),
    make("pdf-forms", scope="user"),
    # ties: equal precedence
    make("twin", scope="user", folder="a/twin"),
    make("twin", scope="user", folder="b/twin"),
    make("dup", scope="extra", plugin="p1"),
    make("dup", scope="extra", plugin="p2"),
    # invocation control
    make("internal-helper", user_invocable=False),
    make("deploy", disable_model_invocation=True),
    make("codex-quiet", codex=CodexMetadata(allow_implicit_invocation=False)),
    # tool scoping
    make("readonly", allowed_tools=("Read", "Grep"), body_lines=3),
    make("no-bash", disallowed_tools=("Bash",)),
    make("big-tools", allowed_tools=("Bash",), body_lines=200),
    # names for the scanner rules
    make("3d-modeling"),
    make("foo-bar"),
    make("help"),
    make("status"),
    make("secret"),
    make("secret", scope="user"),
    make("hidden"),
)
CATALOG = Catalog(skills=SKILLS)
HOST = frozenset({"help", "clear", "review"})
"""Built-in slash commands of an example host (the default is none)."""
DISABLED = {f"{REPO}/aleph/SKILL.md"}
DENIED = {f"{REPO}/hidden/SKILL.md"}


def by_path(path: str) -> Skill:
    skill = CATALOG.at_path(path)
    assert skill is not None
    return skill


def enabled(skill: Skill) -> bool:
    return skill.path not in DISABLED


def visible(skill: Skill) -> bool:
    return skill.path not in DENIED


def resolve(text: str, **options: Any) -> Resolution:
    options.setdefault("is_enabled", enabled)
    options.setdefault("is_visible", visible)
    return resolve_message(text, CATALOG, **options)


# -- the seed's UX table, row by row -------------------------------------------------


def test_seed_exact_hit_activates_with_the_task_text() -> None:
    result = resolve("$systematic-debugging fix the auth bug")
    assert [a.path for a in result.activations] == [f"{REPO}/systematic-debugging/SKILL.md"]
    assert result.lines == ("Using skill: systematic-debugging",)
    assert result.text == "fix the auth bug"
    assert result.activations[0].args == "fix the auth bug"
    assert result.diagnostics == ()


def test_seed_yaml_1_2_names_off_and_no_are_two_skills_found_as_written() -> None:
    # read by YAML 1.2 rules (as Codex and Claude Code read them),
    # `name: off` and `name: no` are the skills `off` and `no`, not an ambiguous `false`.
    parsed = [
        parse_skill(f"---\nname: {word}\ndescription: d\n---\n", path=f"{REPO}/{word}/SKILL.md")
        for word in ("off", "no")
    ]
    catalog = Catalog(skills=tuple(p.skill for p in parsed if p.skill is not None))
    result = resolve_message("$off now", catalog)
    assert [a.path for a in result.activations] == [f"{REPO}/off/SKILL.md"]
    assert result.diagnostics == ()
    assert sorted(s.name for s in catalog.skills) == ["no", "off"]


def test_seed_a_plugin_skill_keeps_its_namespace_beside_a_bare_skill_of_its_name() -> None:
    # Claude Code keeps plugin skills in their own namespace.
    bare = make("p-agents")
    plugin = make("p-agents", scope="user", plugin="myplug")
    problems: list[Problem] = []
    skills = resolve_collisions([bare, plugin], problems)
    assert [s.shadowed_by for s in skills] == [None, None] and problems == []
    catalog = Catalog(skills=tuple(skills))
    hit = resolve_message("$myplug:p-agents go", catalog)
    assert [a.qualified_name for a in hit.activations] == ["myplug:p-agents"]
    assert [a.path for a in resolve_message("$p-agents go", catalog).activations] == [bare.path]
    # Two copies inside one plugin namespace still shadow as before.
    again = resolve_collisions([plugin, make("p-agents", scope="repo", plugin="myplug")], [])
    assert sum(s.shadowed_by is not None for s in again) == 1


def test_seed_namespaced_hit_shows_the_namespaced_name() -> None:
    result = resolve("$github:gh-fix-ci inspect failing checks")
    assert [a.qualified_name for a in result.activations] == ["github:gh-fix-ci"]
    assert result.lines == ("Using skill: github:gh-fix-ci",)
    assert result.text == "inspect failing checks"


def test_seed_no_match_says_how_to_list_skills_and_keeps_the_text() -> None:
    result = resolve("$nope do a thing")
    assert result.activations == ()
    assert result.diagnostics == (
        Diagnostic(
            kind="not-found",
            token="$nope",
            message="No skill named 'nope'.",
            hint="Run `skillpack list` to see available skills.",
        ),
    )
    # People read the message with its hint; a model gets the message alone.
    assert result.diagnostics[0].for_people == (
        "No skill named 'nope'. Run `skillpack list` to see available skills."
    )
    assert result.text == "$nope do a thing"


def test_seed_substring_of_several_names_lists_them_and_never_picks() -> None:
    result = resolve("$debugging why does auth fail")
    assert result.activations == ()
    (diagnostic,) = result.diagnostics
    assert diagnostic.kind == "ambiguous"
    assert diagnostic.message == (
        "$debugging matched 3 skills — use $root-cause-debugging, $systematic-debugging "
        "or $superpowers:systematic-debugging."
    )
    assert diagnostic.candidates == (
        "root-cause-debugging",
        "systematic-debugging",
        "superpowers:systematic-debugging",
    )


def test_seed_one_fuzzy_candidate_is_suggested_not_activated() -> None:
    result = resolve("$systematic-debug the login")
    assert result.activations == ()
    assert result.diagnostics == (
        Diagnostic(
            kind="did-you-mean",
            token="$systematic-debug",
            message="No exact skill 'systematic-debug'. Did you mean $systematic-debugging?",
            candidates=("systematic-debugging",),
        ),
    )


def test_seed_disabled_skill_says_how_to_enable_it() -> None:
    result = resolve("$aleph search the planning doc")
    assert result.activations == ()
    assert [(d.kind, d.for_people) for d in result.diagnostics] == [
        ("disabled", "Skill 'aleph' is disabled. Enable it with `skillpack enable aleph`.")
    ]
    assert result.diagnostics[0].message == "Skill 'aleph' is disabled."


def test_seed_two_guidance_skills_ask_to_choose_one() -> None:
    result = resolve("$test-driven-development $systematic-debugging add coverage")
    assert result.activations == ()
    assert result.diagnostics == (
        Diagnostic(
            kind="choose-one",
            token="$test-driven-development $systematic-debugging",
            message=(
                "Choose one skill to lead this turn: "
                "$test-driven-development or $systematic-debugging."
            ),
            candidates=("test-driven-development", "systematic-debugging"),
        ),
    )
    assert result.text == "$test-driven-development $systematic-debugging add coverage"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("```sh\necho $PATH\necho $systematic-debugging\n```", id="fence"),
        pytest.param("run `echo $systematic-debugging` now", id="inline-command"),
        pytest.param("echo $PATH", id="env-var"),
    ],
)
def test_seed_dollar_in_code_or_env_var_is_not_a_mention(text: str) -> None:
    assert resolve(text) == Resolution(text=text)


# -- the resolver, table-driven -------------------------------------------------------

# (text, options, expected "Using skill" ids, expected diagnostic kinds, expected text)
RESOLVE_CASES: list[tuple[str, str, dict[str, Any], list[str], list[str], str | None]] = [
    # exact names, precedence, qualified ids
    ("shadowed-name-repo-wins", "$pdf-forms fill it", {}, ["pdf-forms"], [], "fill it"),
    ("scope-qualified", "$user:pdf-forms fill it", {}, ["user:pdf-forms"], [], "fill it"),
    ("scope-qualified-winner", "$repo:pdf-forms x", {}, ["pdf-forms"], [], "x"),
    (
        "plugin-qualified",
        "$superpowers:systematic-debugging x",
        {},
        ["superpowers:systematic-debugging"],
        [],
        "x",
    ),
    ("bare-plugin-skill-name", "$gh-fix-ci now", {}, ["github:gh-fix-ci"], [], "now"),
    ("unknown-namespace", "$zz:qq now", {}, [], ["not-found"], None),
    ("digit-led-name", "$3d-modeling a cube", {}, ["3d-modeling"], [], "a cube"),
    ("builtin-name-as-mention", "$help me", {}, ["help"], [], "me"),
    ("tie-same-scope", "$twin go", {}, [], ["ambiguous"], None),
    ("tie-two-plugins", "$dup go", {}, [], ["ambiguous"], None),
    ("tie-broken-by-namespace", "$p2:dup go", {}, ["p2:dup"], [], "go"),
    # near misses and case
    ("near-miss-extra-letter", "$foo-barx it", {}, [], ["did-you-mean"], None),
    ("wrong-case", "$Systematic-Debugging it", {}, [], ["did-you-mean"], None),
    ("near-miss-namespace", "$superpowers:systematic-debug x", {}, [], ["did-you-mean"], None),
    ("short-unknown", "$zq", {}, [], ["not-found"], None),
    # things that are not mentions
    ("amounts-and-env", "costs $5k, $9.99 and $PATH", {}, [], [], None),
    ("placeholders", "pass $ARGUMENTS and $1", {}, [], [], None),
    ("escaped", r"price \$pdf-forms", {}, [], [], None),
    ("double-dollar", "$$pdf-forms", {}, [], [], None),
    ("glued-to-letter", "é$pdf-forms", {}, [], [], None),
    ("glued-to-cjk", "使用$pdf-forms", {}, [], [], None),
    # punctuation and unicode around a mention
    ("trailing-period", "fill it with $pdf-forms.", {}, ["pdf-forms"], [], "fill it with."),
    ("parenthesised", "fill ($pdf-forms) it", {}, ["pdf-forms"], [], "fill it"),
    ("quoted", 'fill "$pdf-forms" it', {}, ["pdf-forms"], [], "fill it"),
    (
        "trailing-comma-mid-line",
        "use $pdf-forms, then sign",
        {},
        ["pdf-forms"],
        [],
        "use, then sign",
    ),
    ("leading-colon", "$pdf-forms: fill the form", {}, ["pdf-forms"], [], "fill the form"),
    ("ellipsis", "$pdf-forms… later", {}, ["pdf-forms"], [], "… later"),
    ("cjk-after", "$pdf-forms填写表格", {}, ["pdf-forms"], [], "填写表格"),
    ("cjk-with-space", "请用 $pdf-forms 填写", {}, ["pdf-forms"], [], "请用 填写"),
    ("on-its-own-line", "$pdf-forms\nfill\n  the form", {}, ["pdf-forms"], [], "fill\n  the form"),
    # dedupe
    ("same-mention-twice", "$pdf-forms and again $pdf-forms", {}, ["pdf-forms"], [], "and again"),
    (
        "name-and-link-same-skill",
        f"$pdf-forms [$x]({REPO}/pdf-forms/SKILL.md) go",
        {},
        ["pdf-forms"],
        [],
        "go",
    ),
    ("same-unknown-twice", "$nope and $nope", {}, [], ["not-found"], None),
    # links: the path wins over the name
    (
        "link-absolute",
        f"[$anything]({REPO}/pdf-forms/SKILL.md) fill",
        {},
        ["pdf-forms"],
        [],
        "fill",
    ),
    (
        "link-to-shadowed-copy",
        f"[$pdf-forms]({USER}/pdf-forms/SKILL.md) fill",
        {},
        ["user:pdf-forms"],
        [],
        "fill",
    ),
    (
        "link-relative",
        "[$pdf-forms](.agents/skills/pdf-forms/SKILL.md) fill",
        {"base_dir": "/proj"},
        ["pdf-forms"],
        [],
        "fill",
    ),
    (
        "link-relative-dotdot",
        "[$x](../.agents/skills/pdf-forms) fill",
        {"base_dir": "/proj/src"},
        ["pdf-forms"],
        [],
        "fill",
    ),
    ("link-to-folder", f"[$pdf-forms]({REPO}/pdf-forms) fill", {}, ["pdf-forms"], [], "fill"),
    (
        "link-file-url",
        f"[$pdf-forms](file://{REPO}/pdf-forms/SKILL.md) x",
        {},
        ["pdf-forms"],
        [],
        "x",
    ),
    ("link-missing", "[$pdf-forms](/nowhere/SKILL.md) fill", {}, [], ["not-found"], None),
    (
        "link-not-a-skill-file",
        f"[$pdf-forms]({REPO}/pdf-forms/README.md) x",
        {},
        [],
        ["not-found"],
        None,
    ),
    ("link-disabled", f"[$aleph]({REPO}/aleph/SKILL.md) x", {}, [], ["disabled"], None),
    ("link-denied", f"[$hidden]({REPO}/hidden/SKILL.md) x", {}, [], ["not-found"], None),
    (
        "link-to-web-page-uses-the-name",
        "[$pdf-forms](https://example.com/docs) x",
        {},
        ["pdf-forms"],
        [],
        "x",
    ),
    ("link-in-code", f"`[$x]({REPO}/pdf-forms/SKILL.md)`", {}, [], [], None),
    # enabled and visible
    ("denied-is-absent", "$hidden now", {}, [], ["not-found"], None),
    (
        "denied-winner-lets-next-win",
        "$secret now",
        {"is_visible": lambda s: s.path != f"{REPO}/secret/SKILL.md"},
        ["secret"],
        [],
        "now",
    ),
    (
        "all-denied",
        "$secret now",
        {"is_visible": lambda s: s.name != "secret"},
        [],
        ["not-found"],
        None,
    ),
    (
        "disabled-winner-is-reported",
        "$pdf-forms x",
        {"is_enabled": lambda s: s.scope != "repo"},
        [],
        ["disabled"],
        None,
    ),
    # invocation control
    ("user-mentions-internal", "$internal-helper x", {}, [], ["not-user-invocable"], None),
    (
        "model-mentions-internal",
        "$internal-helper x",
        {"invoker": "model"},
        ["internal-helper"],
        [],
        "x",
    ),
    ("user-mentions-deploy", "$deploy now", {}, ["deploy"], [], "now"),
    (
        "model-mentions-deploy",
        "$deploy now",
        {"invoker": "model"},
        [],
        ["not-model-invocable"],
        None,
    ),
    (
        "model-mentions-codex-no-implicit",
        "$codex-quiet x",
        {"invoker": "model"},
        [],
        ["not-model-invocable"],
        None,
    ),
    # several mentions
    (
        "guidance-plus-allowed-tools",
        "$readonly $systematic-debugging go",
        {},
        ["readonly", "systematic-debugging"],
        [],
        "go",
    ),
    (
        "guidance-plus-disallowed-tools",
        "$systematic-debugging $no-bash go",
        {},
        ["systematic-debugging", "no-bash"],
        [],
        "go",
    ),
    ("two-tool-scopers", "$readonly $no-bash go", {}, ["readonly", "no-bash"], [], "go"),
    (
        "long-body-with-tools-is-guidance",
        "$big-tools $systematic-debugging go",
        {},
        [],
        ["choose-one"],
        None,
    ),
    (
        "choose-one-keeps-tool-scoper",
        "$readonly $test-driven-development $pdf-forms go",
        {},
        ["readonly"],
        ["choose-one"],
        "$test-driven-development $pdf-forms go",
    ),
    (
        "all-mode-activates-every-one",
        "$test-driven-development $systematic-debugging go",
        {"multi_mention": "all"},
        ["test-driven-development", "systematic-debugging"],
        [],
        "go",
    ),
    (
        "unknown-does-not-block-known",
        "$tdd $systematic-debugging go",
        {},
        ["systematic-debugging"],
        ["not-found"],
        "$tdd go",
    ),
    (
        "disabled-does-not-block-known",
        "$aleph $pdf-forms go",
        {},
        ["pdf-forms"],
        ["disabled"],
        "$aleph go",
    ),
    # slash commands
    ("slash-skill", "/systematic-debugging fix it", {}, ["systematic-debugging"], [], "fix it"),
    (
        "slash-leading-space-multiline",
        "  /pdf-forms fill\nthe form",
        {},
        ["pdf-forms"],
        [],
        "fill\nthe form",
    ),
    (
        "slash-namespaced",
        "/superpowers:systematic-debugging x",
        {},
        ["superpowers:systematic-debugging"],
        [],
        "x",
    ),
    ("slash-builtin", "/help", {"builtin_commands": HOST}, [], ["shadowed-by-builtin"], "/help"),
    ("slash-builtin-any-case", "/Clear now", {"builtin_commands": HOST}, [], [], "/Clear now"),
    (
        "slash-builtin-ignores-mentions",
        "/review $pdf-forms",
        {"builtin_commands": HOST},
        [],
        [],
        "/review $pdf-forms",
    ),
    ("slash-no-builtins-by-default", "/help", {}, ["help"], [], ""),
    (
        "slash-builtin-shadowing-a-skill-says-so",
        "/pdf-forms x",
        {"builtin_commands": frozenset({"pdf-forms"})},
        [],
        ["shadowed-by-builtin"],
        "/pdf-forms x",
    ),
    ("slash-skill-named-like-a-common-builtin", "/status now", {}, ["status"], [], "now"),
    ("slash-path-is-text", "/usr/bin/env $pdf-forms", {}, ["pdf-forms"], [], "/usr/bin/env"),
    (
        "slash-args-keep-mentions",
        "/systematic-debugging use $root-cause-debugging",
        {},
        ["systematic-debugging"],
        [],
        "use $root-cause-debugging",
    ),
    ("slash-unknown", "/nope x", {}, [], ["not-found"], "/nope x"),
    ("slash-near-miss", "/systematic-debug x", {}, [], ["did-you-mean"], None),
    ("slash-disabled", "/aleph x", {}, [], ["disabled"], None),
    ("slash-not-user-invocable", "/internal-helper", {}, [], ["not-user-invocable"], None),
    ("slash-deploy-by-user", "/deploy prod", {}, ["deploy"], [], "prod"),
    ("slash-tie", "/twin", {}, [], ["ambiguous"], None),
]


@pytest.mark.parametrize(
    ("text", "options", "lines", "kinds", "remaining"),
    [pytest.param(*row[1:], id=row[0]) for row in RESOLVE_CASES],
)
def test_resolve_message_follows_the_resolution_rules(
    text: str,
    options: dict[str, Any],
    lines: list[str],
    kinds: list[str],
    remaining: str | None,
) -> None:
    result = resolve(text, **options)
    assert list(result.lines) == [f"Using skill: {line}" for line in lines]
    assert len(result.activations) == len(lines)
    assert [d.kind for d in result.diagnostics] == kinds
    assert result.text == (text if remaining is None else remaining)
    # A mention's args are the remaining text; a slash command's args are that text too.
    assert all(activation.args == result.text for activation in result.activations)


def test_a_tie_inside_one_scope_lists_paths_and_suggests_a_link() -> None:
    (diagnostic,) = resolve("$twin go").diagnostics
    first, second = f"{USER}/a/twin/SKILL.md", f"{USER}/b/twin/SKILL.md"
    assert diagnostic.candidates == (first, second)
    assert diagnostic.message == (
        f"$twin matched 2 skills — use [$twin]({first}) or [$twin]({second})."
    )


def test_a_tie_between_plugins_lists_the_qualified_ids() -> None:
    (diagnostic,) = resolve("$dup go").diagnostics
    assert diagnostic.candidates == ("p1:dup", "p2:dup")
    assert diagnostic.message == "$dup matched 2 skills — use $p1:dup or $p2:dup."


def test_a_near_miss_suggests_the_close_name() -> None:
    (diagnostic,) = resolve("$foo-barx it").diagnostics
    assert diagnostic.candidates == ("foo-bar",)
    assert diagnostic.message == "No exact skill 'foo-barx'. Did you mean $foo-bar?"


def test_a_slash_near_miss_suggests_the_slash_form() -> None:
    (diagnostic,) = resolve("/systematic-debug x").diagnostics
    assert diagnostic.token == "/systematic-debug"
    assert diagnostic.message == (
        "No exact skill 'systematic-debug'. Did you mean /systematic-debugging?"
    )


def test_invocation_control_messages_say_who_may_start_the_skill() -> None:
    (user,) = resolve("$internal-helper").diagnostics
    assert user.message == (
        "Skill 'internal-helper' cannot be invoked by the user (user-invocable: false); "
        "the model loads it when it is relevant."
    )
    (model,) = resolve("$deploy", invoker="model").diagnostics
    assert model.message == (
        "Skill 'deploy' cannot be invoked by the model (disable-model-invocation); "
        "only the user can start it, with /deploy or $deploy."
    )


def test_a_missing_link_names_the_path_and_the_name_fallback() -> None:
    (diagnostic,) = resolve("[$pdf-forms](/nowhere/SKILL.md)").diagnostics
    assert diagnostic.token == "[$pdf-forms](/nowhere/SKILL.md)"
    assert diagnostic.message == (
        "No skill at '/nowhere/SKILL.md' (from [$pdf-forms](/nowhere/SKILL.md)). Link the "
        "SKILL.md or the folder of a discovered skill, or write $pdf-forms to pick it by name."
    )
    assert diagnostic.hint == "`skillpack list` shows every skill with the path of its SKILL.md."


def test_three_guidance_skills_are_listed_with_commas() -> None:
    (diagnostic,) = resolve("$pdf-forms $aleph $root-cause-debugging $foo-bar x").diagnostics[1:]
    assert diagnostic.message == (
        "Choose one skill to lead this turn: $pdf-forms, $root-cause-debugging or $foo-bar."
    )


def test_an_activation_remembers_how_it_was_selected() -> None:
    link = f"[$x]({REPO}/pdf-forms/SKILL.md)"
    (by_link,) = resolve(f"{link} then $pdf-forms").activations
    assert (by_link.source, by_link.token) == ("link", link)
    (by_slash,) = resolve("/pdf-forms a b").activations
    assert (by_slash.source, by_slash.token, by_slash.args) == ("slash", "/pdf-forms", "a b")


def test_failed_suggestions_are_capped_per_message() -> None:
    near_misses = [f"$foo-bar{letter}" for letter in "abcdefgh"]
    result = resolve(" ".join(near_misses))
    kinds = [d.kind for d in result.diagnostics]
    assert kinds[:FUZZY_LOOKUPS_PER_MESSAGE] == ["did-you-mean"] * FUZZY_LOOKUPS_PER_MESSAGE
    assert set(kinds[FUZZY_LOOKUPS_PER_MESSAGE:]) == {"not-found"}


@pytest.mark.parametrize(
    ("skill", "expected"),
    [
        pytest.param(make("a", allowed_tools=("Read",)), True, id="allowed-tools-no-body"),
        pytest.param(make("a", disallowed_tools=()), True, id="empty-deny-list"),
        pytest.param(make("a", allowed_tools=("Read",), body_lines=10), True, id="at-limit"),
        pytest.param(make("a", allowed_tools=("Read",), body_lines=11), False, id="long-body"),
        pytest.param(make("a"), False, id="no-tool-policy"),
    ],
)
def test_only_scopes_tools_needs_a_tool_policy_and_a_short_body(
    skill: Skill, expected: bool
) -> None:
    assert only_scopes_tools(skill) is expected


def test_to_dict_shapes_are_plain_json() -> None:
    result = resolve("$pdf-forms fill $nope")
    assert result.to_dict() == {
        "activations": [
            {
                "name": "pdf-forms",
                "qualified_name": "repo:pdf-forms",
                "path": f"{REPO}/pdf-forms/SKILL.md",
                "args": "fill $nope",
                "source": "mention",
            }
        ],
        "diagnostics": [
            {
                "kind": "not-found",
                "token": "$nope",
                "message": "No skill named 'nope'.",
                "candidates": [],
                "hint": "Run `skillpack list` to see available skills.",
            }
        ],
        "lines": ["Using skill: pdf-forms"],
        "text": "fill $nope",
    }
    activation = Activation(skill=SKILLS[0], args="", source="slash", token="/x")
    assert (activation.name, activation.path) == ("systematic-debugging", SKILLS[0].path)


# -- find_skill --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected_path"),
    [
        pytest.param({"name": "pdf-forms"}, f"{REPO}/pdf-forms/SKILL.md", id="bare-name"),
        pytest.param({"name": "$pdf-forms"}, f"{REPO}/pdf-forms/SKILL.md", id="dollar-prefix"),
        pytest.param({"name": "/pdf-forms"}, f"{REPO}/pdf-forms/SKILL.md", id="slash-prefix"),
        pytest.param({"name": "user:pdf-forms"}, f"{USER}/pdf-forms/SKILL.md", id="qualified"),
        pytest.param(
            {"name": "pdf-forms", "path": f"{USER}/pdf-forms/SKILL.md"},
            f"{USER}/pdf-forms/SKILL.md",
            id="path-wins-over-name",
        ),
        pytest.param({"path": f"{REPO}/pdf-forms"}, f"{REPO}/pdf-forms/SKILL.md", id="folder"),
        pytest.param(
            {"path": "pdf-forms/SKILL.md", "base_dir": REPO},
            f"{REPO}/pdf-forms/SKILL.md",
            id="relative-path",
        ),
        pytest.param(
            {"name": "internal-helper"},
            f"{REPO}/internal-helper/SKILL.md",
            id="model-may-use-internal",
        ),
        pytest.param(
            {"name": "deploy", "invoker": "user"},
            f"{REPO}/deploy/SKILL.md",
            id="user-may-use-deploy",
        ),
    ],
)
def test_find_skill_returns_the_selected_skill(options: dict[str, Any], expected_path: str) -> None:
    skill = find_skill(CATALOG, is_enabled=enabled, is_visible=visible, **options)
    assert skill is by_path(expected_path)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        pytest.param({"name": "nope"}, SkillNotFoundError, id="unknown-name"),
        pytest.param({"path": "/nowhere/SKILL.md"}, SkillNotFoundError, id="unknown-path"),
        pytest.param({"name": "hidden"}, SkillNotFoundError, id="denied-name"),
        pytest.param({"path": f"{REPO}/hidden/SKILL.md"}, SkillNotFoundError, id="denied-path"),
        pytest.param({"name": "debugging"}, SkillNotFoundError, id="fuzzy-only"),
        pytest.param({"name": "twin"}, AmbiguousSkillError, id="tie"),
        pytest.param({"name": "aleph"}, SkillDisabledError, id="disabled"),
        pytest.param({"path": f"{REPO}/aleph/SKILL.md"}, SkillDisabledError, id="disabled-path"),
        pytest.param({"name": "deploy"}, SkillDisabledError, id="model-may-not-use-deploy"),
        pytest.param(
            {"name": "internal-helper", "invoker": "user"},
            SkillDisabledError,
            id="user-may-not-use-internal",
        ),
        pytest.param({}, UsageError, id="nothing-given"),
    ],
)
def test_find_skill_refuses_with_the_matching_error(
    options: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        find_skill(CATALOG, is_enabled=enabled, is_visible=visible, **options)
    assert type(caught.value) is error


def test_find_skill_not_found_carries_suggestions() -> None:
    with pytest.raises(SkillNotFoundError) as caught:
        find_skill(CATALOG, name="systematic-debug")
    assert caught.value.candidates == ("systematic-debugging",)
    assert "Did you mean systematic-debugging?" in str(caught.value)


def test_find_skill_ambiguous_carries_the_ids_to_use() -> None:
    with pytest.raises(AmbiguousSkillError) as caught:
        find_skill(CATALOG, name="dup")
    assert caught.value.candidates == ("p1:dup", "p2:dup")


# -- suggest -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "limit", "expected"),
    [
        pytest.param(
            "debugging",
            3,
            ("root-cause-debugging", "systematic-debugging", "superpowers:systematic-debugging"),
            id="substring",
        ),
        pytest.param("debugging", 1, ("root-cause-debugging",), id="limited"),
        pytest.param("$pdf-form", 3, ("pdf-forms", "user:pdf-forms"), id="dollar-and-shadowed"),
        pytest.param("foo-barx", 3, ("foo-bar",), id="close-spelling"),
        pytest.param("zzzzzz", 3, (), id="nothing-close"),
        pytest.param("", 3, (), id="empty"),
    ],
)
def test_suggest_lists_close_ids(name: str, limit: int, expected: tuple[str, ...]) -> None:
    assert suggest(name, CATALOG, limit=limit) == expected


def test_suggest_skips_skills_the_permission_layer_hides() -> None:
    assert suggest("hidde", CATALOG) == ("hidden",)
    assert suggest("hidde", CATALOG, is_visible=visible) == ()


def test_a_builtin_command_shadowing_a_skill_says_how_to_reach_the_skill() -> None:
    result = resolve("/Help me", builtin_commands=["/help"])
    assert result.activations == () and result.text == "/Help me"
    (diagnostic,) = result.diagnostics
    assert diagnostic.kind == "shadowed-by-builtin"
    assert diagnostic.candidates == ("help",)
    assert diagnostic.message == (
        "/Help is one of the host's own commands, so it does not start the skill 'help'; "
        "write $help to use the skill."
    )
    (mention,) = resolve("$help me", builtin_commands=["help"]).activations
    assert mention.name == "help"


# -- the smaller seed gaps ------------------------------------------


def test_seed_a_wildcard_says_wildcards_are_not_supported_and_offers_the_namespace() -> None:
    result = resolve("$github:* fix the build")
    assert result.activations == ()
    (diagnostic,) = result.diagnostics
    assert diagnostic.token == "$github:*"
    assert diagnostic.message == (
        "Wildcards are not supported: $github:* names no skill. Name one skill: $github:gh-fix-ci."
    )
    assert diagnostic.candidates == ("github:gh-fix-ci",)
    (star,) = resolve("$nothing* now").diagnostics
    assert star.message == "Wildcards are not supported: $nothing* names no skill."


def test_seed_a_mention_in_an_indented_code_block_activates_nothing() -> None:
    # the same text as in a fenced block.
    loop = 'Deploy each:\n\n    for f in a b; do\n      $deploy "$f"\n    done\n'
    assert resolve(loop).activations == ()
    assert resolve("```\n" + loop + "```\n").activations == ()
    assert [a.qualified_name for a in resolve("- step\n\n    $deploy").activations] == [
        "repo:deploy"
    ]


def test_seed_a_codex_policy_refusal_names_the_codex_policy() -> None:
    codex = resolve("$codex-quiet", invoker="model").diagnostics[0].message
    assert "(Codex policy allow_implicit_invocation: false)" in codex
    assert "disable-model-invocation" not in codex
    frontmatter = resolve("$deploy", invoker="model").diagnostics[0].message
    assert "(disable-model-invocation)" in frontmatter


def test_seed_the_disabled_hint_comes_from_the_host() -> None:
    result = resolve("$aleph", enable_command=lambda skill, shown: f"x --project {shown}")
    assert result.diagnostics[0].hint == "Enable it with `x --project aleph`."
