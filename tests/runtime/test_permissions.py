"""Permission rules (deny > allow > ask, globs) and the session's ask gate."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from skillpack._errors import SkillPermissionError
from skillpack._model import Scope, Skill
from skillpack.runtime._permissions import AskAnswer, PermissionGate
from skillpack.select._rules import Decision, PermissionRules


def make_skill(
    name: str,
    *,
    scope: Scope = "user",
    plugin: str | None = None,
    folder: str | None = None,
    real_dir: str | None = None,
) -> Skill:
    folder = folder or f"/skills/{scope}/{name}"
    return Skill(
        name=name,
        description="A test skill.",
        path=f"{folder}/SKILL.md",
        dir=folder,
        real_path=f"{real_dir or folder}/SKILL.md",
        scope=scope,
        plugin=plugin,
    )


PRECEDENCE_CASES: list[Any] = [
    pytest.param({}, make_skill("pdf"), "allow", id="no-rules-allow"),
    pytest.param(
        {"deny": ("pdf",), "allow": ("pdf",)}, make_skill("pdf"), "deny", id="deny-beats-allow"
    ),
    pytest.param(
        {"deny": ("*",), "allow": ("pdf",)},
        make_skill("pdf"),
        "deny",
        id="deny-star-beats-exact-allow",
    ),
    pytest.param(
        {"allow": ("pdf",), "ask": ("*",)}, make_skill("pdf"), "allow", id="allow-beats-ask"
    ),
    pytest.param(
        {"allow": ("pdf",), "ask": ("*",)}, make_skill("docx"), "ask", id="ask-star-for-others"
    ),
    pytest.param(
        {"deny": ("pdf",), "ask": ("pdf",)}, make_skill("pdf"), "deny", id="deny-beats-ask"
    ),
    pytest.param(
        {"deny": ("pdf",)}, make_skill("pdf-tools"), "allow", id="exact-name-is-not-prefix"
    ),
    pytest.param({"deny": ("pdf*",)}, make_skill("pdf-tools"), "deny", id="star-matches-suffix"),
    pytest.param({"deny": ("pdf?",)}, make_skill("pdfx"), "deny", id="question-one-char"),
    pytest.param({"deny": ("pdf?",)}, make_skill("pdf"), "allow", id="question-needs-a-char"),
    pytest.param({"deny": ("doc[sx]",)}, make_skill("docs"), "deny", id="class-matches"),
    pytest.param({"deny": ("doc[sx]",)}, make_skill("docz"), "allow", id="class-excludes"),
    pytest.param({"deny": ("doc[!s]",)}, make_skill("docs"), "allow", id="negated-class"),
    pytest.param({"deny": ("PDF",)}, make_skill("pdf"), "allow", id="case-sensitive"),
    pytest.param(
        {"deny": ("acme:*",)}, make_skill("pdf", plugin="acme"), "deny", id="plugin-qualified-glob"
    ),
    pytest.param(
        {"deny": ("acme:*",)}, make_skill("pdf"), "allow", id="plugin-glob-spares-plain-skill"
    ),
    pytest.param(
        {"deny": ("repo:*",)}, make_skill("pdf", scope="repo"), "deny", id="scope-qualified"
    ),
    pytest.param({"deny": ("repo:*",)}, make_skill("pdf", scope="user"), "allow", id="other-scope"),
    pytest.param(
        {"deny": ("repo:*",)},
        make_skill("pdf", scope="repo", plugin="acme"),
        "deny",
        id="scope-glob-covers-plugin-skill",
    ),
    pytest.param(
        {"ask": ("/clones/*",)},
        make_skill("pdf", folder="/clones/x/pdf"),
        "ask",
        id="path-glob-on-folder",
    ),
    pytest.param(
        {"deny": ("/real/pdf",)},
        make_skill("pdf", folder="/link/pdf", real_dir="/real/pdf"),
        "deny",
        id="path-glob-on-real-path",
    ),
    pytest.param(
        {"deny": ("/clones/*",)},
        make_skill("pdf", folder="/home/pdf"),
        "allow",
        id="path-glob-elsewhere",
    ),
]


@pytest.mark.parametrize(("rules", "skill", "expected"), PRECEDENCE_CASES)
def test_rules_decide_by_precedence_and_globs(
    rules: dict[str, Any], skill: Skill, expected: Decision
) -> None:
    permission_rules = PermissionRules(**rules)
    assert permission_rules.decide(skill) == expected
    assert permission_rules.visible(skill) is (expected != "deny")


def test_explain_names_the_rule_and_where_it_came_from() -> None:
    rules = PermissionRules(deny=("pd*",), origins={("deny", "pd*"): "/etc/x/config.toml"})
    message = rules.explain(make_skill("pdf"))
    assert "'pdf'" in message
    assert "'pd*'" in message
    assert "/etc/x/config.toml" in message


def test_explain_without_origin_says_session_rules() -> None:
    message = PermissionRules(ask=("pdf",)).explain(make_skill("pdf"))
    assert "the session's rules" in message
    assert "approval" in message


def test_merged_concatenates_lists_and_keeps_origins() -> None:
    first = PermissionRules(allow=("a",), origins={("allow", "a"): "user.toml"})
    second = PermissionRules(allow=("a", "b"), deny=("c",), origins={("deny", "c"): "proj.toml"})
    merged = first.merged(second)
    assert merged.allow == ("a", "b")
    assert merged.deny == ("c",)
    assert merged.where("allow", "a") == "user.toml"
    assert merged.where("deny", "c") == "proj.toml"


def test_with_rule_moves_a_glob_to_one_decision() -> None:
    rules = PermissionRules(allow=("pdf",), ask=("*",))
    moved = rules.with_rule("pdf", "deny", origin="here")
    assert (moved.allow, moved.deny, moved.ask) == ((), ("pdf",), ("*",))
    assert moved.where("deny", "pdf") == "here"


class Host:
    """An ask callback that replays answers and records every question."""

    def __init__(self, *answers: AskAnswer) -> None:
        self.answers = list(answers)
        self.questions: list[tuple[str, str]] = []

    def __call__(self, skill: Skill, action: str) -> AskAnswer:
        self.questions.append((skill.name, action))
        return self.answers.pop(0)


def refuse_to_be_called(skill: Skill, action: str) -> AskAnswer:
    raise AssertionError(f"asked about {skill.name} although the rules decide")


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        pytest.param(PermissionRules(deny=("pdf",)), False, id="deny"),
        pytest.param(PermissionRules(allow=("pdf",), ask=("*",)), True, id="allow"),
        pytest.param(PermissionRules(), True, id="no-rule"),
    ],
)
def test_gate_does_not_ask_when_rules_decide(rules: PermissionRules, expected: bool) -> None:
    gate = PermissionGate(rules, ask=refuse_to_be_called)
    assert gate.check(make_skill("pdf")) is expected


def test_always_is_remembered_and_the_host_is_asked_once() -> None:
    host = Host("always")
    persisted: list[tuple[str, Decision]] = []
    gate = PermissionGate(
        PermissionRules(ask=("*",)), ask=host, remember=lambda g, d: persisted.append((g, d))
    )
    skill = make_skill("pdf")
    assert [gate.check(skill, "load") for _ in range(3)] == [True, True, True]
    assert host.questions == [("pdf", "load")]
    assert persisted == [("user:pdf", "allow")]
    assert gate.remembered(skill) == "always"
    assert gate.decide(skill) == "allow"


def test_never_is_remembered_and_hides_the_skill() -> None:
    host = Host("never")
    persisted: list[tuple[str, Decision]] = []
    gate = PermissionGate(
        PermissionRules(ask=("*",)), ask=host, remember=lambda g, d: persisted.append((g, d))
    )
    skill = make_skill("pdf", plugin="acme")
    assert gate.check(skill) is False
    assert gate.check(skill) is False
    assert len(host.questions) == 1
    assert persisted == [("acme:pdf", "deny")]
    assert gate.visible(skill) is False
    assert "never" in gate.explain(skill)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [pytest.param("allow", True, id="allow-once"), pytest.param("deny", False, id="deny-once")],
)
def test_once_answers_apply_once(answer: AskAnswer, expected: bool) -> None:
    host = Host(answer, answer)
    persisted: list[tuple[str, Decision]] = []
    gate = PermissionGate(
        PermissionRules(ask=("pdf",)), ask=host, remember=lambda g, d: persisted.append((g, d))
    )
    skill = make_skill("pdf")
    assert gate.check(skill, "load") is expected
    assert gate.check(skill, "read_file") is expected
    assert host.questions == [("pdf", "load"), ("pdf", "read_file")]
    assert persisted == []
    assert gate.remembered(skill) is None
    assert gate.visible(skill) is True


def test_deny_once_is_explained_as_the_hosts_refusal() -> None:
    gate = PermissionGate(PermissionRules(ask=("pdf",)), ask=Host("deny"))
    skill = make_skill("pdf")
    assert gate.check(skill) is False
    assert "refused by the host" in gate.explain(skill)


def test_ask_without_callback_is_refused_with_a_reason() -> None:
    rules = PermissionRules(ask=("pd*",), origins={("ask", "pd*"): "/p/.skillpack/config.toml"})
    gate = PermissionGate(rules)
    skill = make_skill("pdf")
    assert gate.check(skill) is False
    reason = gate.explain(skill)
    assert "cannot ask" in reason
    assert "'pd*'" in reason
    assert "/p/.skillpack/config.toml" in reason
    with pytest.raises(SkillPermissionError, match="cannot ask"):
        gate.require(skill)


def test_require_on_a_denied_skill_raises_with_the_rule() -> None:
    gate = PermissionGate(PermissionRules(deny=("pdf",)))
    with pytest.raises(SkillPermissionError, match="denied by permission rule 'pdf'"):
        gate.require(make_skill("pdf"))


def test_unexpected_callback_answer_is_a_refusal() -> None:
    def host(skill: Skill, action: str) -> Any:
        return "yes"

    gate = PermissionGate(PermissionRules(ask=("*",)), ask=host)
    skill = make_skill("pdf")
    assert gate.check(skill) is False
    assert "'yes'" in gate.explain(skill)


def test_failing_remember_hook_propagates_but_keeps_the_answer() -> None:
    def remember(glob: str, decision: Decision) -> None:
        raise OSError("disk full")

    gate = PermissionGate(PermissionRules(ask=("*",)), ask=Host("always"), remember=remember)
    skill = make_skill("pdf")
    with pytest.raises(OSError, match="disk full"):
        gate.check(skill)
    assert gate.check(skill) is True


def test_callback_may_check_another_skill_without_deadlock() -> None:
    gate: PermissionGate

    def host(skill: Skill, action: str) -> AskAnswer:
        if skill.name == "outer":
            assert gate.check(make_skill("inner")) is True
        return "always"

    gate = PermissionGate(PermissionRules(ask=("*",)), ask=host)
    assert gate.check(make_skill("outer")) is True


def test_concurrent_checks_ask_once_per_skill() -> None:
    calls: Counter[str] = Counter()
    lock = threading.Lock()
    wide_window = threading.Event()

    def host(skill: Skill, action: str) -> AskAnswer:
        with lock:
            calls[skill.name] += 1
        # Hold the question open a moment so the other threads pile up behind it.
        wide_window.wait(0.01)
        return "always"

    gate = PermissionGate(PermissionRules(ask=("*",)), ask=host)
    skills = [make_skill(f"s{i}") for i in range(4)]
    threads_per_skill = 8
    barrier = threading.Barrier(len(skills) * threads_per_skill)
    results: list[bool] = []

    def worker(skill: Skill) -> None:
        barrier.wait()
        allowed = gate.check(skill)
        with lock:
            results.append(allowed)

    threads = [
        threading.Thread(target=worker, args=(skill,))
        for skill in skills
        for _ in range(threads_per_skill)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == Counter({skill.name: 1 for skill in skills})
    assert results == [True] * len(threads)
