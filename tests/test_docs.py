"""Every `python` and `console` block on the documentation site runs as written.

A page's blocks run in order in one fresh folder, with the isolated home every test
has: the Python blocks share one namespace, and each `$ ` line of a `console` block
runs in a shell, must exit 0 and print the lines shown under it (`...` stands for any
lines, or any text within a line). A block whose first line says
`docs-test: skip (why)` is not run, and must give the reason; a `$ ` line that says
it is skipped alone. Shell examples are `console` blocks: an `sh`/`bash`/`shell` block
would never run, so the pages may not have one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import yaml

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.S | re.M)


def _site_hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("site_hooks", DOCS / "site_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SITE_HOOKS = _site_hooks()
SKIP: re.Pattern[str] = SITE_HOOKS.MARKER
RUN = ("python", "console")
UNCHECKED_SHELLS = ("sh", "bash", "shell", "zsh")


@dataclass(frozen=True, kw_only=True, slots=True)
class Block:
    page: Path
    line: int
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(DOCS)}:{self.line}"


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [
        Block(
            page=page,
            line=text.count("\n", 0, match.start()) + 1,
            language=match.group(1),
            text=match.group(2),
        )
        for match in FENCE.finditer(text)
    ]


def skipped(block: Block) -> bool:
    first = block.text.split("\n", 1)[0]
    return SKIP.search(first) is not None and not first.lstrip().startswith("$")


def matches(expected: list[str], actual: list[str]) -> bool:
    """`actual` lines against `expected`, where a `...` line is any lines (none too)
    and `...` within a line is any text."""
    if not expected:
        return True  # the output was not shown: only the exit status counts
    patterns = [
        None if line.strip() == "..." else re.compile(".*".join(map(re.escape, line.split("..."))))
        for line in expected
    ]

    def at(p: int, a: int) -> bool:
        if p == len(patterns):
            return a == len(actual)
        pattern = patterns[p]
        if pattern is None:
            return any(at(p + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and pattern.fullmatch(actual[a]) is not None and at(p + 1, a + 1)

    return at(0, 0)


def run_console(block: Block, cwd: Path) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line.rstrip())
        else:
            raise AssertionError(f"{block.where}: a console block starts with a `$ ` command")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    env["COLUMNS"] = "88"  # as docs/cli.md is written
    for command, expected in commands:
        if SKIP.search(command):
            continue
        done = subprocess.run(
            command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, (
            f"{block.where}: `{command}` exited {done.returncode}:\n{output}"
        )
        actual = [line.rstrip() for line in output.splitlines()]
        assert matches(expected, actual), (
            f"{block.where}: `{command}` printed\n{output}\nnot the lines shown:\n"
            + "\n".join(expected)
        )


# The framework pages' Python blocks need a model: each runs in tests/integrations on its
# framework's own offline model (`framework_task.run_page`).
FRAMEWORKS = DOCS / "frameworks"


@pytest.mark.parametrize(
    "page",
    [p for p in pages() if FRAMEWORKS not in p.parents],
    ids=lambda p: str(p.relative_to(DOCS)),
)
def test_every_snippet_on_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in blocks(page):
        assert block.language not in UNCHECKED_SHELLS, (
            f"{block.where}: write shell examples as `console` blocks (`$ ` commands), "
            "which this test runs"
        )
        if block.language not in RUN or skipped(block):
            continue
        if block.language == "python":
            code = compile(block.text, block.where, "exec")
            exec(code, namespace)  # noqa: S102 - our own documentation
        else:
            run_console(block, tmp_path)


def test_every_skip_gives_its_reason_and_the_site_has_runnable_snippets() -> None:
    run = 0
    for page in pages():
        for block in blocks(page):
            for line in block.text.splitlines():
                if "docs-test:" in line:
                    assert SKIP.search(line), f"{block.where}: write `docs-test: skip (why)`"
            run += block.language in RUN and not skipped(block)
    assert run >= 10


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a ... z"], ["a to z"], True),
        (["a", "b"], ["a", "b", "c"], False),
        (["a", "...", "x"], ["a", "b"], False),
        ([], ["anything"], True),
    ],
)
def test_shown_output_is_matched_line_by_line(
    expected: list[str], actual: list[str], ok: bool
) -> None:
    assert matches(expected, actual) is ok


def test_the_site_shows_no_test_marker() -> None:
    config = yaml.safe_load((DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "docs/site_hooks.py" in config["hooks"]
    marked = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        marked += text.count("# docs-test:")
        for match in FENCE.finditer(SITE_HOOKS.strip_markers(text)):
            assert "docs-test:" not in match.group(2), page
    assert marked >= 10  # the sources keep them, for the test above


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        ("$ a   # docs-test: skip (why)\n$ b\n", "$ a\n$ b\n"),
        ("# docs-test: skip (needs a key)\nprint(1)\n", "print(1)\n"),
        ("x = 1  # an ordinary comment\n\n", "x = 1  # an ordinary comment\n\n"),
    ],
)
def test_a_marker_leaves_its_block_and_nothing_else_does(block: str, shown: str) -> None:
    assert SITE_HOOKS.strip_markers(f"Prose `docs-test: skip (x)`.\n```console\n{block}```\n") == (
        f"Prose `docs-test: skip (x)`.\n```console\n{shown}```\n"
    )


PLUMBING = frozenset(
    {
        "check_not_running",
        "ensure_fresh",
        "keep_value",
        "kept_value",
        "pop_invocation",
        "push_invocation",
        "require_skills_enabled",
        "sets_none_apart",
    }
)
"""`Session` members the surfaces use and a host has no use for: off the API page."""


def test_the_api_page_documents_every_public_name_and_no_private_one() -> None:
    import skillpack
    import skillpack.mcp

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    shown = re.findall(r"^::: (\S+)$", text, re.M)
    assert not [t for t in shown if "._" in t], "a private name on the API page"
    top = {t.split(".")[1] for t in shown if t.count(".") == 1}
    assert top - {"mcp"} <= set(skillpack.__all__)
    assert set(skillpack.__all__) - {"__version__"} <= top, "a public name left off"
    session = {t.rsplit(".", 1)[1] for t in shown if t.startswith("skillpack.Session.")}
    assert all(hasattr(skillpack.Session, name) for name in session)
    assert session and not session & PLUMBING
    listed = re.findall(r"^        - (\w+)$", text, re.M)  # the `members:` lists
    assert set(listed) <= set(skillpack.mcp.__all__) | {"conversation", "close"}
    modules = {t for t in shown if t.startswith("skillpack.integrations.")}
    assert modules == {
        f"skillpack.integrations.{name}" for name in ("pydantic_ai", "openai_agents", "langchain")
    }
