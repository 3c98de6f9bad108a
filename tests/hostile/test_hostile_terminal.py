"""Terminal escape sequences in skills never reach the terminal.

Every human-facing command shows control, bidi and invisible format characters as
visible escapes (`\\x1b`, `\\u202e`) and rich markup in skill text as text; `--json`
output stays byte-exact.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import WriteSkill
from skillpack.cli._app import cli
from skillpack.cli._output import emit_text, safe_text

# YAML double-quoted escapes: \e is ESC, \a BEL, \x9b the one-byte CSI.
NAME = "evil\\e[2J"
NAME_TEXT = "evil\x1b[2J"
DESCRIPTION = "Clear\\e[2J\\e[H now \\e]0;pwned\\a title \u202egnp.exe \\x9b31m [red]markup[/red]"
DESCRIPTION_TEXT = (
    "Clear\x1b[2J\x1b[H now \x1b]0;pwned\x07 title \u202egnp.exe \x9b31m [red]markup[/red]"
)
FOLDER = "dir\x1b]0;t\x07x"

# What must never reach a terminal: C0 controls but newline, DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def hostile_root(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "skills"
    write_skill(
        "evil",
        base=root,
        frontmatter=f'name: "{NAME}"\ndescription: "{DESCRIPTION}"\nallowed-tools: Read',
        body="# Evil\n\nUse $ARGUMENTS.\n",
    )
    write_skill(FOLDER, base=root, name="plain", description="A plain skill in a hostile folder.")
    return root


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output)
    return result


def catalog_args(root: Path) -> list[str]:
    return ["--root", str(root), "--no-user", "--no-system", "--no-cache"]


def assert_shown_safely(output: str) -> None:
    assert RAW.search(output) is None, repr(RAW.search(output))


def test_list_shows_escapes_visibly(hostile_root: Path) -> None:
    out = run("list", *catalog_args(hostile_root)).stdout
    assert_shown_safely(out)
    assert "\\x1b[2J" in out
    assert "[red]markup" in out  # rich markup in skill text is shown, not obeyed
    assert "dir\\x1b]0;t\\x07x" in out


def test_search_shows_escapes_visibly(hostile_root: Path) -> None:
    out = run("search", "clear title markup", *catalog_args(hostile_root)).stdout
    assert_shown_safely(out)
    assert "evil\\x1b[2J" in out


def test_validate_shows_escapes_visibly(hostile_root: Path) -> None:
    result = run("validate", str(hostile_root))
    assert_shown_safely(result.stdout)
    assert "\\x1b" in result.stdout


def test_show_shows_escapes_visibly(hostile_root: Path) -> None:
    out = run("show", str(hostile_root / "evil"), *catalog_args(hostile_root)).stdout
    assert_shown_safely(out)
    assert "\\u202egnp.exe" in out
    assert "\\x9b31m" in out


def test_resolve_shows_escapes_visibly(hostile_root: Path) -> None:
    out = run("resolve", "use $evil please", *catalog_args(hostile_root)).stdout
    assert_shown_safely(out)
    assert "evil\\x1b[2J" in out


def test_triggers_report_shows_escapes_visibly(hostile_root: Path) -> None:
    result = CliRunner().invoke(cli, ["triggers", str(hostile_root), *catalog_args(hostile_root)])
    assert_shown_safely(result.stdout)
    assert "evil\\x1b[2J" in result.stdout


def test_errors_on_stderr_show_escapes_visibly(hostile_root: Path) -> None:
    result = run("load", "evil\x1b[2Jx", *catalog_args(hostile_root), code=1)
    assert_shown_safely(result.stderr)
    assert "\\x1b[2Jx" in result.stderr


def test_disable_confirmation_shows_escapes_visibly(hostile_root: Path) -> None:
    args = ["--root", str(hostile_root), "--no-system", "--no-cache"]  # the user config decides
    out = run("disable", str(hostile_root / FOLDER), *args).stdout
    assert_shown_safely(out)
    assert "dir\\x1b]0;t\\x07x" in out


@pytest.mark.parametrize(
    "command",
    [["list"], ["show", "evil\x1b[2J"], ["search", "clear title"]],
    ids=["list", "show", "search"],
)
def test_json_output_keeps_the_exact_text(hostile_root: Path, command: list[str]) -> None:
    data = json.loads(run(*command, *catalog_args(hostile_root), "--json").stdout)
    skills = data.get("skills") or data.get("results") or [data["skill"]]
    evil = next(s for s in skills if s["name"] == NAME_TEXT)
    assert evil["description"] == DESCRIPTION_TEXT


def test_list_json_keeps_the_exact_folder_name(hostile_root: Path) -> None:
    data = json.loads(run("list", *catalog_args(hostile_root), "--json").stdout)
    plain = next(s for s in data["skills"] if s["name"] == "plain")
    assert plain["dir"] == str(hostile_root / FOLDER)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text", "plain text"),
        ("\x1b[2J", "\\x1b[2J"),
        ("a\u202eb", "a\\u202eb"),
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("tab\there", "tab\\there"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\x7f"),
        ("c1\x85", "c1\\x85"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("surrogate\udcff", "surrogate\\udcff"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("two\nlines", "two\\nlines"),
        ("no-break\u00a0space, 日本語, émoji 🎉", "no-break\u00a0space, 日本語, émoji 🎉"),
    ],
)
def test_safe_text_escapes_what_a_terminal_would_obey(text: str, shown: str) -> None:
    assert safe_text(text) == shown


def test_safe_text_keeps_newlines_and_tabs_of_multi_line_fields() -> None:
    assert safe_text("a\n\tb\x1b", multiline=True) == "a\n\tb\\x1b"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_injection_text_is_exact_in_a_pipe_and_escaped_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "# Body\n\x1b[2Jline\n"
    pipe = io.StringIO()
    monkeypatch.setattr("sys.stdout", pipe)
    emit_text(text)
    assert pipe.getvalue() == text + "\n"
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    emit_text(text)
    assert terminal.getvalue() == "# Body\n\\x1b[2Jline\n\n"
