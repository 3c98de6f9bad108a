"""Shell preprocessing and hook commands, run only when the host's `ShellPolicy` says so.

Off by default: a session without a policy runs nothing and leaves `` !`cmd` `` in
the text as written. With a policy, every command a skill's own text embeds
(`select._commands`) goes through, in order:

1. the policy's patterns (`select._shell_patterns`): no match, not run;
2. shell syntax (`;`, `|`, `$`, a backtick, a line break, ...) runs only when the
   policy sets `shell=True`; otherwise the command is split into words (`shlex`) and
   run with no shell at all, so nothing in it is interpreted;
3. the session's permission gate, action `shell` (or `hook`): a skill whose rules
   deny or whose host declines runs nothing;
4. the policy's `approve` callback, when the host gives one (per command);
5. the run: in its own process group, in the skill's folder (or `cwd`), with a
   minimal environment (or `env`) that never holds the session's secrets; killed
   with its whole group at `timeout`; output cut at `max_output_bytes` and marked.

The output replaces the command; a failure shows inline with its exit code, a refusal
says why. Arguments are substituted afterwards, into the text around the commands
only (`render._substitute`, `keep`): an argument never reaches a command.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from .._errors import UsageError
from .._model import Skill
from ..select._commands import CommandForm, ShellCommand, find_shell_commands
from ..select._shell_patterns import (
    SKILL_DIR_PLACEHOLDERS,
    ShellPattern,
    compile_pattern,
    uses_shell_syntax,
)
from ._permissions import PermissionGate

RunStatus = Literal["ok", "failed", "timeout", "refused", "error"]
"""`ok`: exit code 0. `failed`: another exit code. `timeout`: killed at the limit.
`refused`: not run (policy, gate or host). `error`: could not start."""

_ENV_KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TEMP", "TMP", "SYSTEMROOT")
"""Variables the default environment copies from the host process, when set."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellRequest:
    """What the host's `approve` callback is asked about: one command, about to run."""

    skill: Skill
    command: str
    kind: Literal["preprocess", "hook"]
    """`preprocess`: embedded in the skill's text; `hook`: one of its hooks."""
    cwd: str
    pattern: str
    """The policy pattern that allowed it."""
    shell: bool
    """True when it runs through the shell, False when as a plain argument list."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellPolicy:
    """The host's switch for running commands that skills declare. Absent: nothing runs.

    Example: `ShellPolicy(allow=("git status", "git diff *", "ls"))`.
    """

    allow: tuple[str, ...]
    """Command patterns (globs, `prefix:*`, or `re:` regexes; see
    `select._shell_patterns`). A command no pattern matches is not run."""
    timeout: float = 10.0
    """Seconds a command may run; then its whole process group is killed."""
    max_output_bytes: int = 16_384
    """Output kept per stream; the rest is cut and the cut is marked."""
    cwd: str | None = None
    """Working directory; None: the skill's own folder."""
    env: Mapping[str, str] | None = None
    """The whole environment of a command; None: a minimal one (PATH, HOME, LANG, ...).
    `SKILL_DIR` and `CLAUDE_SKILL_DIR` are always added."""
    shell: bool = False
    """Run matching commands that use shell syntax through `/bin/sh -c` (`cmd /c` on
    Windows). False: such commands are refused, the others run without a shell."""
    approve: Callable[[ShellRequest], bool] | None = None
    """Asked before each command runs, when given; False refuses it."""
    max_commands: int = 20
    """Commands run per skill load at most; the rest are refused."""
    _patterns: tuple[ShellPattern, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        allow: object = self.allow  # as given: a caller past the hints may pass one str
        if isinstance(allow, str):
            raise UsageError(
                "ShellPolicy(allow=...) takes a tuple of patterns, not one string; "
                f"write allow=({allow!r},)."
            )
        if not self.timeout > 0:
            raise UsageError(
                f"ShellPolicy timeout must be a positive number of seconds, not {self.timeout!r}."
            )
        if self.max_output_bytes < 0 or self.max_commands < 0:
            raise UsageError("ShellPolicy max_output_bytes and max_commands cannot be negative.")
        patterns = tuple(compile_pattern(p) for p in self.allow)
        object.__setattr__(self, "allow", tuple(self.allow))
        object.__setattr__(self, "_patterns", patterns)

    def match(self, command: str) -> str | None:
        """The first pattern that allows `command`, or None."""
        for pattern in self._patterns:
            if pattern.matches(command):
                return pattern.text
        return None

    def refusal(self, command: str) -> tuple[str | None, str | None]:
        """`(pattern, None)` when the policy allows `command`, else `(None, reason)`."""
        pattern = self.match(command)
        if pattern is None:
            return None, (
                "no pattern of the host's shell policy allows it"
                if self._patterns
                else "the host's shell policy allows no command"
            )
        syntax = uses_shell_syntax(command)
        if syntax is not None and not self.shell:
            return None, (
                f"it uses shell syntax ({syntax!r}) and the policy runs commands without a "
                "shell (ShellPolicy(shell=True) allows it)"
            )
        return pattern, None


@dataclass(frozen=True, kw_only=True, slots=True)
class ShellRun:
    """One command a skill declared, and what became of it."""

    command: str
    kind: Literal["preprocess", "hook"]
    status: RunStatus
    output: str
    """The text that replaced the command (output, a failure or a refusal notice)."""
    exit_code: int | None = None
    reason: str | None = None
    """Why it was refused or could not start."""
    pattern: str | None = None
    """The policy pattern that allowed it."""
    form: CommandForm | None = None
    line: int | None = None
    truncated: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.command,
            "kind": self.kind,
            "status": self.status,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "pattern": self.pattern,
            "form": self.form,
            "line": self.line,
            "truncated": self.truncated,
            "output": self.output,
        }


@dataclass(frozen=True, kw_only=True, slots=True)
class Preprocessed:
    """A body's commands, decided and run: the spans to splice and the record."""

    keep: tuple[tuple[int, int, str], ...] = ()
    """`(start, end, text)` for `render_injection(keep=...)`."""
    runs: tuple[ShellRun, ...] = ()


def preprocess(
    skill: Skill,
    body: str,
    *,
    policy: ShellPolicy,
    gate: PermissionGate,
) -> Preprocessed:
    """Run the commands `body` embeds under `policy` (see the module docstring)."""
    commands = find_shell_commands(body)
    keep = []
    runs = []
    for index, command in enumerate(commands):
        if index >= policy.max_commands:
            limit = f"more than {policy.max_commands} commands in one skill"
            run = _refused(command.command, "preprocess", limit)
        else:
            run = run_declared(skill, command.command, kind="preprocess", policy=policy, gate=gate)
        run = _placed(run, command)
        keep.append((command.start, command.end, run.output))
        runs.append(run)
    return Preprocessed(keep=tuple(keep), runs=tuple(runs))


def _placed(run: ShellRun, command: ShellCommand) -> ShellRun:
    return replace(run, form=command.form, line=command.line)


def run_declared(
    skill: Skill,
    command: str,
    *,
    kind: Literal["preprocess", "hook"],
    policy: ShellPolicy,
    gate: PermissionGate,
    stdin: bytes | None = None,
    timeout: float | None = None,
) -> ShellRun:
    """Check one command a skill declared against everything, then run it."""
    command = command.strip()
    pattern, reason = policy.refusal(command)
    if reason is not None:
        return _refused(command, kind, reason)
    action = "shell" if kind == "preprocess" else "hook"
    if not gate.check(skill, action):
        return _refused(command, kind, gate.explain(skill), pattern=pattern)
    shell = uses_shell_syntax(command) is not None
    cwd = policy.cwd or skill.dir
    if policy.approve is not None:
        request = ShellRequest(
            skill=skill, command=command, kind=kind, cwd=cwd, pattern=pattern or "", shell=shell
        )
        if not policy.approve(request):
            return _refused(command, kind, "the host declined to run it", pattern=pattern)
    try:
        argv = _shell_argv(command) if shell else _plain_argv(command, skill.dir)
    except ValueError as error:
        return _refused(command, kind, f"it cannot be split into words ({error})", pattern=pattern)
    result = run_process(
        argv,
        cwd=cwd,
        env=_environment(policy, skill),
        timeout=policy.timeout if timeout is None else min(timeout, policy.timeout),
        max_output_bytes=policy.max_output_bytes,
        stdin=stdin,
    )
    return result.as_run(command, kind=kind, pattern=pattern)


def _refused(
    command: str, kind: Literal["preprocess", "hook"], reason: str, *, pattern: str | None = None
) -> ShellRun:
    return ShellRun(
        command=command,
        kind=kind,
        status="refused",
        output=f"[shell command not run: {command} — {reason}]",
        reason=reason,
        pattern=pattern,
    )


def _plain_argv(command: str, skill_dir: str) -> list[str]:
    words = shlex.split(command)
    if not words:
        raise ValueError("no words")
    # Filled word by word, after splitting: a folder name with spaces or `;` stays
    # inside its word and is never read by a shell.
    for placeholder in SKILL_DIR_PLACEHOLDERS:
        words = [w.replace(placeholder, skill_dir) for w in words]
    return words


def _shell_argv(command: str) -> list[str]:
    if sys.platform == "win32":
        return [os.environ.get("COMSPEC", "cmd.exe"), "/d", "/s", "/c", command]
    return ["/bin/sh", "-c", command]


def _environment(policy: ShellPolicy, skill: Skill) -> dict[str, str]:
    if policy.env is not None:
        env = dict(policy.env)
    else:
        env = {k: os.environ[k] for k in _ENV_KEPT if k in os.environ}
        env.setdefault("PATH", os.defpath)
    env["SKILL_DIR"] = skill.dir
    env["CLAUDE_SKILL_DIR"] = skill.dir
    return env


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessResult:
    """What one process did."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_dropped: int = 0
    """Bytes of stdout past the cap, read and thrown away."""
    stderr_dropped: int = 0
    timed_out: bool = False
    error: str | None = None
    """Why it could not start (program not found, ...)."""
    timeout: float = 0.0

    def as_run(
        self, command: str, *, kind: Literal["preprocess", "hook"], pattern: str | None
    ) -> ShellRun:
        """The record of the run, with the text that replaces the command."""
        if self.error is not None:
            return ShellRun(
                command=command,
                kind=kind,
                status="error",
                output=f"[shell command could not start: {command} — {self.error}]",
                reason=self.error,
                pattern=pattern,
            )
        stdout = _text(self.stdout, self.stdout_dropped)
        truncated = bool(self.stdout_dropped or self.stderr_dropped)
        if self.timed_out:
            note = f"[shell command timed out after {self.timeout:g} s and was stopped: {command}]"
            return ShellRun(
                command=command,
                kind=kind,
                status="timeout",
                output="\n".join(p for p in (stdout, note) if p),
                pattern=pattern,
                truncated=truncated,
            )
        if self.exit_code == 0:
            return ShellRun(
                command=command,
                kind=kind,
                status="ok",
                output=stdout,
                exit_code=0,
                pattern=pattern,
                truncated=truncated,
            )
        stderr = _text(self.stderr, self.stderr_dropped)
        note = f"[shell command failed with exit code {self.exit_code}: {command}]"
        return ShellRun(
            command=command,
            kind=kind,
            status="failed",
            output="\n".join(p for p in (stdout, note, stderr) if p),
            exit_code=self.exit_code,
            pattern=pattern,
            truncated=truncated,
        )


def _text(data: bytes, dropped: int) -> str:
    text = data.decode("utf-8", errors="replace").rstrip("\r\n")
    if dropped:
        text += f"\n[output cut at {len(data)} bytes; {dropped} more bytes not shown]"
    return text


def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int,
    stdin: bytes | None = None,
) -> ProcessResult:
    """Run `argv` (no shell) in its own process group; bounded in time and memory.

    Output beyond `max_output_bytes` per stream is read and dropped (the child never
    blocks on a full pipe); at `timeout` the whole group is killed.
    """
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=sys.platform != "win32",
            creationflags=_NEW_GROUP_FLAGS,
        )
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return ProcessResult(exit_code=None, stdout=b"", stderr=b"", error=reason)
    readers = [
        _Reader(process.stdout, max_output_bytes),
        _Reader(process.stderr, max_output_bytes),
    ]
    if stdin is not None:
        threading.Thread(target=_feed, args=(process, stdin), daemon=True).start()
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    # Also when it exited: what it left running in its group (`cmd &`) goes with it.
    _kill_group(process)
    process.wait()
    for reader in readers:
        # A grandchild that left the group may keep a pipe open: never wait for it
        # past the deadline (plus a moment to collect what was already written).
        reader.finish(max(deadline - time.monotonic(), 0) + 0.5)
    out, err = readers
    return ProcessResult(
        exit_code=None if timed_out else process.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
        timed_out=timed_out,
        timeout=timeout,
    )


_NEW_GROUP_FLAGS: int = (
    getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if sys.platform == "win32" else 0
)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    if sys.platform == "win32":
        if process.poll() is None:
            process.kill()
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    # A command may exit without reading its input: that is its choice.
    with contextlib.suppress(OSError):
        process.stdin.write(data)
        process.stdin.close()


class _Reader:
    """Reads one pipe on a daemon thread: keeps `limit` bytes, counts the rest."""

    def __init__(self, stream: object, limit: int) -> None:
        self.data = bytearray()
        self.dropped = 0
        self._stream = stream
        self._limit = limit
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        read = self._stream.read1  # type: ignore[attr-defined]
        try:
            while chunk := read(65536):
                room = self._limit - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                self.dropped += max(len(chunk) - max(room, 0), 0)
        except (OSError, ValueError):
            pass

    def finish(self, timeout: float) -> None:
        """Wait for the end of the pipe, then close it; a pipe still held open by a
        process outside the group is left to its daemon thread."""
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._stream.close()  # type: ignore[attr-defined]
