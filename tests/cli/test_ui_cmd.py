"""`skillpack ui` as a real process: `--pick` on a terminal with stdout captured, and
the errors it gives before drawing anything."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli

ENTRY = "from skillpack.cli import main; main()"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    for name, description in [
        ("deploy-app", "Ship the service to production."),
        ("pdf-tools", "Fill and merge PDF forms."),
    ]:
        folder = root / ".agents" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nBody.\n", "utf-8"
        )
    return root


class Terminal:
    """`skillpack ui` with stdin and stderr on a pseudo-terminal, stdout on a pipe:
    what `X=$(skillpack ui --pick)` gives it."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        import pty

        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="xterm-256color", COLUMNS="100", LINES="30")
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(
            [sys.executable, "-c", ENTRY, *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = bytearray()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        # Read what the picker draws, so it never blocks on a full terminal buffer.
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
                if ready:
                    chunk = os.read(self.master, 65536)
                    if not chunk:
                        return
                    self.screen.extend(chunk)
            except OSError:
                return
            if self.process.poll() is not None and not ready:
                return

    def wait_for(self, text: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"{text!r} never drawn; got {bytes(self.screen[-500:])!r}")
            time.sleep(0.05)

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())
        time.sleep(0.3)

    def finish(self) -> tuple[int, str]:
        stdout, _ = self.process.communicate(timeout=30)
        os.close(self.master)
        return self.process.returncode, stdout.decode()


needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@needs_pty
@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], "$pdf-tools\n"),
        (["--print", "path"], "{project}/.agents/skills/pdf-tools/SKILL.md\n"),
    ],
)
def test_pick_prints_only_the_choice_on_stdout(
    project: Path, extra: list[str], expected: str
) -> None:
    term = Terminal(["ui", "--pick", "--no-system", *extra], project)
    term.wait_for(b"deploy-app")  # the picker drew its list on the terminal
    term.type("pdf")
    term.wait_for(b"Fill and merge")
    term.type("\r")
    code, out = term.finish()
    assert code == 0
    assert out == expected.format(project=project)


@needs_pty
def test_pick_json_gives_the_listing_entry_and_the_mention(project: Path) -> None:
    term = Terminal(["ui", "--pick", "--json", "--no-system", "--query", "deploy"], project)
    term.wait_for(b"Ship the service")
    term.type("\r")
    code, out = term.finish()
    assert code == 0
    data = json.loads(out)
    assert data["qualified_name"] == "repo:deploy-app"
    assert data["mention"] == "$deploy-app"
    assert data["enabled"] is True and data["missing_dependencies"] == []


@needs_pty
def test_pick_cancelled_prints_nothing_and_exits_130(project: Path) -> None:
    term = Terminal(["ui", "--pick", "--no-system"], project)
    term.wait_for(b"deploy-app")
    term.type("\x1b")
    code, out = term.finish()
    assert (code, out) == (130, "")


def test_json_without_pick_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["ui", "--json"])
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "INVALID_PARAM"


def test_without_a_terminal_it_says_what_it_needs(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", ENTRY, "ui", "--no-system"],
        cwd=project, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert "run it with both on a terminal" in result.stderr


def test_without_textual_it_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "textual" else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    result = CliRunner().invoke(cli, ["ui"])
    assert result.exit_code == 2
    assert "pip install 'skillpack[tui]'" in result.output
