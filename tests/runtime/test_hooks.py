"""Skill-scoped hooks: parsing Claude Code's format, matching, `once`, running them
under the shell policy, and failures that never break the turn."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from conftest import WriteSkill, root_session
from skillpack.parse._hooks import HookSpec, parse_hooks
from skillpack.runtime._shell import ShellPolicy

PY = shlex.quote(sys.executable)

HOOKS = """\
hooks:
  PreToolUse:
    - matcher: "Bash|Edit"
      hooks:
        - type: command
          command: {py} check.py
          timeout: 5
    - matcher: "*"
      hooks:
        - {{type: command, command: {py} once.py, once: true}}
        - {{type: prompt, prompt: Is this safe?}}
  Stop:
    - hooks:
        - {{type: command, command: {py} fail.py}}
"""


def test_claude_code_hooks_parse_into_specs() -> None:
    specs, problems = parse_hooks(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "timeout": 3}]},
                {"hooks": [{"type": "prompt", "prompt": "ok?"}, {"command": "b", "once": True}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "c"}]}],
        }
    )
    assert problems == ()
    rows = [(s.event, s.matcher, s.type, s.command, s.timeout, s.once, s.position) for s in specs]
    assert rows == [
        ("PreToolUse", "Bash", "command", "a", 3.0, False, (0, 0)),
        ("PreToolUse", None, "prompt", None, None, False, (1, 0)),
        ("PreToolUse", None, "command", "b", None, True, (1, 1)),
        ("Stop", None, "command", "c", None, False, (0, 0)),
    ]


@pytest.mark.parametrize(
    ("hooks", "kept", "problem"),
    [
        ({"PreToolUse": "x"}, 0, "must be a list of matcher groups"),
        ({"PreToolUse": ["x"]}, 0, "must be a mapping with `hooks:`"),
        ({"PreToolUse": [{"matcher": 3, "hooks": []}]}, 0, "matcher must be text"),
        ({"PreToolUse": [{"matcher": "Bash"}]}, 0, "hooks must be a list of hooks"),
        ({"PreToolUse": [{"hooks": ["x"]}]}, 0, "must be a mapping such as"),
        ({"PreToolUse": [{"hooks": [{"type": "command"}]}]}, 0, "without a `command`"),
        ({"PreToolUse": [{"hooks": [{"type": 3, "command": "a"}]}]}, 0, "type must be text"),
        ({"Stop": [{"hooks": [{"command": "a", "timeout": -1}]}]}, 1, "timeout must be"),
        ({"Stop": [{"hooks": [{"command": "a", "once": "yes"}]}]}, 1, "once must be true"),
        ({"Stop": [{"matcher": "(", "hooks": [{"command": "a"}]}]}, 1, "not a valid regex"),
        ({3: []}, 0, "is not a name"),
    ],
)
def test_a_wrong_part_of_the_hooks_is_left_out_and_described(
    hooks: dict[object, object], kept: int, problem: str
) -> None:
    specs, problems = parse_hooks(hooks)  # type: ignore[arg-type]
    assert len(specs) == kept
    assert len(problems) == 1 and problem in problems[0]


@pytest.mark.parametrize(
    ("matcher", "tool", "applies"),
    [
        (None, "Bash", True),
        (None, None, True),
        ("*", "Anything", True),
        ("", "Anything", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Edit|Write", "Write", True),
        ("Notebook.*", "NotebookEdit", True),
        ("mcp__github__.*", "mcp__github__create_issue", True),
        ("Bash", None, False),
        ("(", "(", True),
    ],
)
def test_matchers_are_whole_tool_name_regexes(
    matcher: str | None, tool: str | None, applies: bool
) -> None:
    assert HookSpec(event="PreToolUse", matcher=matcher).matches(tool) is applies


@pytest.fixture
def hooked(tmp_path: Path, write_skill: WriteSkill) -> Path:
    write_skill(
        "skills/guard",
        name="guard",
        frontmatter="name: guard\ndescription: Guards tools. Use in tests.\n" + HOOKS.format(py=PY),
        files={
            "check.py": "import json, sys\nevent = json.load(sys.stdin)\n"
            "print(event['hook_event_name'], event['tool_name'], event['tool_input']['command'])\n"
            "sys.exit(2 if 'rm' in event['tool_input']['command'] else 0)\n",
            "once.py": "open('once.log', 'a').write('ran\\n')\n",
            "fail.py": "import sys\nsys.stderr.write('stop hook broke')\nsys.exit(1)\n",
        },
    )
    write_skill("skills/plain", name="plain")
    return tmp_path / "skills"


def test_hooks_apply_only_while_their_skill_leads(hooked: Path) -> None:
    session = root_session(hooked)
    assert session.declared.hooks_for("PreToolUse", "Bash") == ()
    session.prepare_turn("$guard go")
    hooks = session.declared.hooks_for("PreToolUse", "Bash", consume=False)
    assert [(h.skill.name, h.spec.command) for h in hooks] == [
        ("guard", f"{PY} check.py"),
        ("guard", f"{PY} once.py"),
        ("guard", None),
    ]
    assert [
        h.spec.type for h in session.declared.hooks_for("PreToolUse", "Read", consume=False)
    ] == [
        "command",
        "prompt",
    ]
    session.prepare_turn("$plain next")  # a new user turn: guard no longer leads
    assert session.declared.hooks_for("PreToolUse", "Bash") == ()


def test_a_once_hook_is_returned_once_per_session(hooked: Path) -> None:
    session = root_session(hooked)
    session.prepare_turn("$guard go")
    assert len(session.declared.hooks_for("PreToolUse", "Read", consume=False)) == 2
    assert len(session.declared.hooks_for("PreToolUse", "Read")) == 2
    assert [h.spec.type for h in session.declared.hooks_for("PreToolUse", "Read")] == ["prompt"]
    session.prepare_turn("$guard again")
    assert [h.spec.type for h in session.declared.hooks_for("PreToolUse", "Read")] == ["prompt"]
    assert (
        len(root_session(hooked).declared.hooks_for("Stop")) == 0
    )  # another session: nothing leads


def test_command_hooks_run_under_the_policy_with_json_on_stdin(hooked: Path) -> None:
    policy = ShellPolicy(allow=(f"{PY} *.py",))
    session = root_session(hooked, shell=policy)
    session.prepare_turn("$guard go")
    results = session.declared.run_hooks(
        "PreToolUse", "Bash", payload={"tool_input": {"command": "ls"}}
    )
    assert [(r.run.command, r.run.status, r.blocking) for r in results] == [
        (f"{PY} check.py", "ok", False),
        (f"{PY} once.py", "ok", False),
    ]
    assert results[0].run.output == "PreToolUse Bash ls"
    again = session.declared.run_hooks(
        "PreToolUse", "Bash", payload={"tool_input": {"command": "rm x"}}
    )
    assert [(r.run.command, r.run.exit_code, r.blocking) for r in again] == [
        (f"{PY} check.py", 2, True)
    ]
    assert (hooked / "guard" / "once.log").read_text() == "ran\n"
    assert json.dumps([r.to_dict() for r in again])  # JSON-ready for every surface


def test_a_failing_hook_does_not_break_the_turn(hooked: Path) -> None:
    session = root_session(hooked, shell=ShellPolicy(allow=(f"{PY} *.py",)))
    session.prepare_turn("$guard go")
    [result] = session.declared.run_hooks("Stop")
    assert (result.run.status, result.run.exit_code) == ("failed", 1)
    assert "stop hook broke" in result.run.output
    assert session.prepare_turn("$plain next").injections  # the session goes on


def test_without_a_policy_no_hook_runs(hooked: Path) -> None:
    session = root_session(hooked)
    session.prepare_turn("$guard go")
    results = session.declared.run_hooks(
        "PreToolUse", "Bash", payload={"tool_input": {"command": "x"}}
    )
    assert {r.run.status for r in results} == {"refused"}
    assert all("no shell policy" in (r.run.reason or "") for r in results)
    assert not (hooked / "guard" / "once.log").exists()


def test_a_hook_the_policy_does_not_allow_is_refused(hooked: Path) -> None:
    session = root_session(hooked, shell=ShellPolicy(allow=(f"{PY} check.py",)))
    session.prepare_turn("$guard go")
    [result] = session.declared.run_hooks("Stop")
    assert result.run.status == "refused"
    assert "no pattern of the host's shell policy allows it" in (result.run.reason or "")


def test_a_host_callback_that_raises_is_a_result_not_an_exception(hooked: Path) -> None:
    def approve(request: object) -> bool:
        raise RuntimeError("approval service down")

    session = root_session(hooked, shell=ShellPolicy(allow=(f"{PY} *.py",), approve=approve))
    session.prepare_turn("$guard go")
    [result] = session.declared.run_hooks("Stop")
    assert result.run.status == "error"
    assert result.run.reason == "RuntimeError: approval service down"


def test_a_hooks_own_timeout_is_used_below_the_policys(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill(
        "skills/slow",
        frontmatter=f"name: slow\ndescription: Slow hook.\nhooks:\n  Stop:\n    - hooks:\n"
        f"        - {{command: {PY} slow.py, timeout: 0.3}}\n",
        files={"slow.py": "import time\ntime.sleep(30)\n"},
    )
    session = root_session(tmp_path / "skills", shell=ShellPolicy(allow=(f"{PY} *",), timeout=20))
    session.prepare_turn("$slow go")
    [result] = session.declared.run_hooks("Stop")
    assert result.run.status == "timeout"
    assert "timed out after 0.3 s" in result.run.output


def test_a_broken_hooks_part_is_a_validation_warning_and_strict_error() -> None:
    from skillpack.parse._frontmatter import parse_skill

    text = (
        "---\nname: h\ndescription: Hooks.\nhooks:\n  PreToolUse:\n"
        "    - matcher: Bash\n      hooks:\n        - {type: command}\n---\nBody\n"
    )
    lenient = parse_skill(text, path="/s/h/SKILL.md")
    assert [(p.code, p.severity, p.line) for p in lenient.problems] == [
        ("hooks-invalid", "warning", 4)
    ]
    assert "PreToolUse[0].hooks[0] is a command hook without a `command`" in (
        lenient.problems[0].message
    )
    strict = parse_skill(text, path="/s/h/SKILL.md", strict=True)
    assert strict.skill is None and strict.problems[0].severity == "error"
