"""Hostile inputs, generated: nothing binary or huge is committed.

Each builder returns text (or writes a tree) that broke skillpack once;
the tests in this folder feed them to the parser, the walk, the index, the reader,
the config writer and the tools. `run_isolated` runs code in a child interpreter, so
a crash (a segfault in libyaml) or a hang fails one test instead of the whole run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

HEX_DIGITS = 4000
"""`0x` + this many `f`: an integer of about 4,800 decimal digits, past Python's
default 4,300-digit limit for `str(int)`."""


def skill_text(frontmatter: str, body: str = "# Body\n") -> str:
    """A SKILL.md with `frontmatter` (lines, without the `---`) and `body`."""
    return f"---\n{frontmatter.strip(chr(10))}\n---\n{body}"


def huge_hex() -> str:
    """A YAML int that Python can build but not print in decimal."""
    return "0x" + "f" * HEX_DIGITS


def deep_flow(depth: int, opener: str = "[") -> str:
    """`x: [[[[…` nested `depth` deep (never closed: libyaml recursed before it saw that)."""
    return "x: " + opener * depth


def deep_block(depth: int) -> str:
    """`x:` then a block sequence nested `depth` deep on one line (`- - - … a`)."""
    return "x:\n" + "- " * depth + "a"


def deep_indented(depth: int) -> str:
    """Block mappings nested `depth` deep by indentation, one space per level."""
    return "\n".join(" " * i + f"k{i}:" for i in range(depth)) + " v"


def merge_chain(links: int) -> str:
    """YAML merge keys that double at each link: `m1: &m1 {<<: [*m0, *m0]}` …"""
    lines = ["m0: &m0 {a: 1, b: 2}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, links)]
    return "\n".join(lines)


def terminal_attacks() -> dict[str, str]:
    """Text that a terminal would obey rather than show, by what it does."""
    return {
        "clear": "\x1b[2J\x1b[H",
        "title": "\x1b]0;pwned\x07",
        "bidi": "abc\u202egnp.exe",
        "bell": "\x07",
        "c1": "\x9b31m",
        "del": "\x7f",
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class Isolated:
    """What a child interpreter did."""

    returncode: int | None
    """None when it was killed for running past its timeout."""
    stdout: str
    stderr: str


def run_isolated(code: str, *, timeout: float, cwd: str | None = None) -> Isolated:
    """Run `code` in a fresh interpreter (this one's `sys.executable`); a crash or a
    hang is reported, not suffered. The environment is this process's (the tests'
    isolated home included)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=dict(os.environ),
        )
    except subprocess.TimeoutExpired as exc:

        def text(value: object) -> str:
            return value.decode(errors="replace") if isinstance(value, bytes) else ""

        return Isolated(returncode=None, stdout=text(exc.stdout), stderr=text(exc.stderr))
    return Isolated(returncode=done.returncode, stdout=done.stdout, stderr=done.stderr)
