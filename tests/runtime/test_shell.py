"""Shell preprocessing under a host's ShellPolicy: off by default, each guard, the runner."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from conftest import WriteSkill, root_session
from skillpack._errors import UsageError
from skillpack._model import Skill
from skillpack.config._schema import Config
from skillpack.runtime._permissions import AskAnswer, PermissionGate
from skillpack.runtime._session import Session
from skillpack.runtime._shell import ShellPolicy, ShellRequest, run_declared, run_process
from skillpack.select._rules import PermissionRules

PY = shlex.quote(sys.executable)
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def load(root: Path, name: str, args: str = "", **kwargs: object) -> str:
    return root_session(root, **kwargs).load(name=name, args=args, invoker="user").text


def test_without_a_policy_nothing_runs_and_the_text_stays(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("skills/s", body="Now: !`touch ran`\n")
    text = load(tmp_path / "skills", "s")
    assert "Now: !`touch ran`" in text
    assert not (tmp_path / "skills" / "s" / "ran").exists()


def test_an_allowed_command_is_replaced_by_its_output(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("skills/s", body="Greeting: !`echo hello world`.\n\n```!\necho block\n```\nEnd\n")
    session = root_session(tmp_path / "skills", shell=ShellPolicy(allow=("echo *",)))
    injection = session.load(name="s", invoker="user")
    assert "Greeting: hello world." in injection.text
    assert "block\nEnd" in injection.text
    assert "!`" not in injection.text
    assert [(r.command, r.status, r.form, r.line) for r in injection.commands] == [
        ("echo hello world", "ok", "inline", 1),
        ("echo block", "ok", "block", 3),
    ]


def test_a_command_no_pattern_allows_is_refused_and_not_run(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("skills/s", body="!`touch ran`\n")
    text = load(tmp_path / "skills", "s", shell=ShellPolicy(allow=("echo *",)))
    assert "[shell command not run: touch ran — no pattern of the host's shell policy" in text
    assert not (tmp_path / "skills" / "s" / "ran").exists()


def test_shell_syntax_needs_a_shell_policy(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("skills/s", body="!`echo a | tr a b`\n")
    root = tmp_path / "skills"
    refused = load(root, "s", shell=ShellPolicy(allow=("echo a | tr a b",)))
    assert "uses shell syntax ('|')" in refused
    ran = load(root, "s", shell=ShellPolicy(allow=("echo a | tr a b",), shell=True))
    assert "\nb\n" in ran


def test_a_failure_shows_inline_with_its_exit_code(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(
        "skills/s",
        body=f"!`{PY} fail.py`\n",
        files={"fail.py": "import sys\nprint('partial')\nsys.stderr.write('boom')\nsys.exit(3)\n"},
    )
    session = root_session(tmp_path / "skills", shell=ShellPolicy(allow=(f"{PY} fail.py",)))
    injection = session.load(name="s", invoker="user")
    assert f"partial\n[shell command failed with exit code 3: {PY} fail.py]\nboom" in injection.text
    assert injection.commands[0].exit_code == 3


def test_a_program_that_is_not_there_is_reported(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("skills/s", body="!`no-such-program-xyz --help`\n")
    text = load(tmp_path / "skills", "s", shell=ShellPolicy(allow=("no-such-program-xyz *",)))
    assert "[shell command could not start: no-such-program-xyz --help" in text


def test_commands_run_in_the_skill_folder_with_a_minimal_environment(
    tmp_path: Path, write_skill: WriteSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_TOKEN", "host-secret-value")
    folder = write_skill(
        "skills/s",
        body=f"!`{PY} show.py`\n",
        files={
            "show.py": "import os, json\nprint(json.dumps([os.getcwd(), sorted(os.environ)]))\n"
        },
    )
    text = load(tmp_path / "skills", "s", shell=ShellPolicy(allow=(f"{PY} show.py",)))
    assert os.path.realpath(folder) in text or str(folder) in text
    assert "HOST_TOKEN" not in text
    assert '"CLAUDE_SKILL_DIR"' in text and '"SKILL_DIR"' in text


def test_cwd_and_env_of_the_policy_are_used(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(
        "skills/s",
        body=f"!`{PY} ${{SKILL_DIR}}/show.py`\n",
        files={"show.py": "import os\nprint(os.getcwd(), os.environ.get('ONLY'))\n"},
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    policy = ShellPolicy(
        allow=(f"{PY} *",), cwd=str(elsewhere), env={"ONLY": "this", "PATH": os.defpath}
    )
    text = load(tmp_path / "skills", "s", shell=policy)
    assert f"{os.path.realpath(elsewhere)} this" in text or f"{elsewhere} this" in text


def test_the_skill_folder_placeholder_is_filled_inside_one_word(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    # A folder name with blanks and shell syntax stays one word: no shell reads it.
    write_skill(
        "skills/odd; touch pwned $(touch pwned2)",
        name="odd",
        body=f"!`{PY} ${{CLAUDE_SKILL_DIR}}/hello.py`\n",
        files={"hello.py": "print('hello from the odd folder')\n"},
    )
    text = load(tmp_path / "skills", "odd", shell=ShellPolicy(allow=(f"{PY} *",)))
    assert "hello from the odd folder" in text
    assert not list(tmp_path.rglob("pwned*"))


def test_the_permission_gate_sees_each_command(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("skills/s", body="A !`echo one` B !`echo two`\n")
    answers: list[AskAnswer] = ["allow", "allow", "deny"]
    asked: list[tuple[str, str]] = []

    def ask(skill: Skill, action: str) -> AskAnswer:
        asked.append((skill.name, action))
        return answers[len(asked) - 1]

    catalog = root_session(tmp_path / "skills").catalog
    session = Session(
        catalog,
        config=Config(permissions=PermissionRules(ask=("s",))),
        ask=ask,
        shell=ShellPolicy(allow=("echo *",)),
    )
    text = session.load(name="s", invoker="user").text
    assert asked == [("s", "load"), ("s", "shell"), ("s", "shell")]
    assert "A one B [shell command not run: echo two — Skill 's' was refused by the host" in text


def test_the_hosts_approve_callback_decides_per_command(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("skills/s", body="!`echo yes-please` !`echo no-thanks`\n")
    seen: list[ShellRequest] = []

    def approve(request: ShellRequest) -> bool:
        seen.append(request)
        return "yes" in request.command

    text = load(tmp_path / "skills", "s", shell=ShellPolicy(allow=("echo *",), approve=approve))
    assert "yes-please" in text
    assert "[shell command not run: echo no-thanks — the host declined to run it]" in text
    assert [(r.command, r.kind, r.pattern, r.shell) for r in seen] == [
        ("echo yes-please", "preprocess", "echo *", False),
        ("echo no-thanks", "preprocess", "echo *", False),
    ]


def test_commands_past_the_limit_are_refused(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill("skills/s", body="!`echo 1` !`echo 2` !`echo 3`\n")
    text = load(tmp_path / "skills", "s", shell=ShellPolicy(allow=("echo *",), max_commands=2))
    assert text.count("[shell command not run") == 1
    assert "more than 2 commands in one skill" in text


def test_output_past_the_cap_is_cut_and_marked(tmp_path: Path, write_skill: WriteSkill) -> None:
    write_skill(
        "skills/s",
        body=f"!`{PY} big.py`\n",
        files={"big.py": "import sys\nsys.stdout.write('x' * 200000)\n"},
    )
    text = load(
        tmp_path / "skills", "s", shell=ShellPolicy(allow=(f"{PY} big.py",), max_output_bytes=100)
    )
    assert "x" * 100 + "\n[output cut at 100 bytes; 199900 more bytes not shown]" in text
    assert "x" * 101 not in text


@posix_only
def test_a_command_past_its_timeout_is_killed_with_its_whole_group(tmp_path: Path) -> None:
    script = tmp_path / "spawn.sh"
    script.write_text("sleep 60 &\necho $! > child.pid\nwait\n", encoding="utf-8")
    result = run_process(
        ["/bin/sh", str(script)],
        cwd=str(tmp_path),
        env={"PATH": os.defpath},
        timeout=0.5,
        max_output_bytes=100,
    )
    assert result.timed_out
    run = result.as_run("sh spawn.sh", kind="preprocess", pattern="sh *")
    assert run.status == "timeout"
    assert "[shell command timed out after 0.5 s and was stopped: sh spawn.sh]" in run.output
    assert _dies(int((tmp_path / "child.pid").read_text()))


@posix_only
def test_what_a_command_leaves_running_is_stopped_when_it_exits(tmp_path: Path) -> None:
    script = tmp_path / "leave.sh"
    script.write_text("sleep 60 &\necho $! > child.pid\necho done\n", encoding="utf-8")
    result = run_process(
        ["/bin/sh", str(script)], cwd=str(tmp_path), env={}, timeout=30, max_output_bytes=100
    )
    assert (result.exit_code, result.stdout) == (0, b"done\n")
    assert _dies(int((tmp_path / "child.pid").read_text()))


def _dies(pid: int) -> bool:
    """SIGKILL is delivered asynchronously: wait (up to 10 s) for the process to go."""
    deadline = time.monotonic() + 10
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_hooks_and_preprocessing_share_the_gate_with_their_own_action() -> None:
    skill = Skill(name="h", description="d", path="/nowhere/h/SKILL.md", dir="/nowhere/h")
    actions: list[str] = []

    def ask(skill: Skill, action: str) -> AskAnswer:
        actions.append(action)
        return "deny"

    gate = PermissionGate(PermissionRules(ask=("h",)), ask=ask)
    run = run_declared(
        skill, "echo x", kind="hook", policy=ShellPolicy(allow=("echo *",)), gate=gate
    )
    assert (run.status, actions) == ("refused", ["hook"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allow": "echo *"}, "takes a tuple of patterns"),
        ({"allow": ("echo *",), "timeout": 0}, "positive number of seconds"),
        ({"allow": ("echo *",), "max_output_bytes": -1}, "cannot be negative"),
        ({"allow": ("re:[",)}, "not a valid regular expression"),
    ],
)
def test_a_bad_policy_is_a_usage_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ShellPolicy(**kwargs)  # type: ignore[arg-type]


def test_a_forked_skill_gets_its_commands_run_before_its_arguments(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    from skillpack.runtime._tools import SkillTools

    write_skill(
        "skills/forked",
        frontmatter="name: forked\ndescription: Runs in a fork.\ncontext: fork",
        body="Status: !`echo clean`\nTask: $ARGUMENTS\n",
    )
    prompts: list[str] = []

    class Runner:
        def run(self, *, skill: Skill, prompt: str, agent: str | None, model: str | None) -> str:
            prompts.append(prompt)
            return "done"

    session = root_session(tmp_path / "skills", shell=ShellPolicy(allow=("echo *",)))
    result = SkillTools(session, runner=Runner()).use_skill("forked", args="!`echo injected`")
    assert result["ok"] and prompts == ["Status: clean\nTask: !`echo injected`"]
