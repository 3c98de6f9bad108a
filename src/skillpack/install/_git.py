"""Shallow clones with the real `git`, never prompting, bounded in time.

A branch or tag is cloned with `--depth 1 --branch`; a commit id is fetched by id
(most servers allow it), falling back to a full clone and a checkout. Credentials
prompts are off (`GIT_TERMINAL_PROMPT=0`), Git LFS smudging is skipped, and only the
`file`, `https`, `ssh` and `git` transports are allowed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .._errors import SkillIOError, UsageError

_HEX_REF = re.compile(r"[0-9a-f]{7,40}")


def git_available() -> bool:
    return shutil.which("git") is not None


def clone(url: str, *, ref: str | None, dest: Path, timeout: float) -> str:
    """Check out `ref` (default branch when None) of `url` into `dest` (not existing).

    Returns:
        The commit id checked out.

    Raises:
        UsageError: git is not installed.
        SkillIOError: the clone failed (unreachable, no such repository or ref), with
            git's own last line of error.
    """
    if not git_available():
        raise UsageError("Installing from a git repository needs `git` on PATH; install it.")
    base = ["clone", "--depth", "1", "--no-tags", "--single-branch"]
    branch = ["--branch", ref] if ref else []
    result = _git([*base, *branch, "--", url, str(dest)], timeout=timeout)
    if result.returncode != 0 and ref and _HEX_REF.fullmatch(ref):
        shutil.rmtree(dest, ignore_errors=True)
        result = _by_commit(url, ref, dest, timeout)
    if result.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        raise SkillIOError(_clone_error(url, ref, result.stderr))
    head = _git(["-C", str(dest), "rev-parse", "HEAD"], timeout=timeout)
    if head.returncode != 0:
        raise SkillIOError(f"git cloned {url} but cannot read its commit: {_last(head.stderr)}")
    return head.stdout.strip()


def _by_commit(url: str, ref: str, dest: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    dest.mkdir(parents=True)
    steps = (
        ["-C", str(dest), "init", "-q"],
        ["-C", str(dest), "fetch", "-q", "--depth", "1", "--", url, ref],
        ["-C", str(dest), "checkout", "-q", "--detach", "FETCH_HEAD"],
    )
    result = _run_steps(steps, timeout)
    if result.returncode == 0:
        return result
    shutil.rmtree(dest, ignore_errors=True)
    full = _git(["clone", "-q", "--no-checkout", "--", url, str(dest)], timeout=timeout)
    if full.returncode != 0:
        return full
    return _git(["-C", str(dest), "checkout", "-q", "--detach", ref], timeout=timeout)


def _run_steps(steps: tuple[list[str], ...], timeout: float) -> subprocess.CompletedProcess[str]:
    result: subprocess.CompletedProcess[str] | None = None
    for step in steps:
        result = _git(step, timeout=timeout)
        if result.returncode != 0:
            return result
    assert result is not None
    return result


def _git(args: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LFS_SKIP_SMUDGE": "1",
            "GIT_ALLOW_PROTOCOL": "file:https:ssh:git",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        return subprocess.run(
            ["git", "-c", "advice.detachedHead=false", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            args, 124, "", f"git took longer than {timeout:g} s and was stopped"
        )


def _last(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "no error output"


def _clone_error(url: str, ref: str | None, stderr: str) -> str:
    last = _last(stderr)
    lowered = stderr.lower()
    if ref and (
        "not found in upstream" in lowered
        or "couldn't find remote ref" in lowered
        or "did not match any" in lowered
        or "not our ref" in lowered
        or "unable to read tree" in lowered
        or "reference is not a tree" in lowered
    ):
        return (
            f"The git ref '{ref}' does not exist in {url} ({last}). Check the branch, tag "
            "or commit name (`git ls-remote` lists them)."
        )
    return f"Cannot clone {url}: {last}. Check the address and your access to it."
