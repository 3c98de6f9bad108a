"""The task every framework test runs, as a scripted model would: find the skill for
"build an MCP server in Python" in what the model is shown, load it, read one of its
files, answer from it. Each framework's offline model drives `TaskScript`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL = "mcp-server-python"
DESCRIPTION = (
    "Build an MCP server in Python with the official SDK: tools, resources and prompts. "
    "Use when asked to build or debug an MCP server in Python."
)
FILE = "references/quickstart.md"
FACT = "Register each tool with the @mcp.tool() decorator."
QUESTION = "Build an MCP server in Python that exposes one tool."

SKILLS = {
    f"{SKILL}/SKILL.md": (
        f"---\nname: {SKILL}\ndescription: {DESCRIPTION}\n---\n"
        f"# MCP servers in Python\n\nRead `{FILE}` before writing code.\n"
    ),
    f"{SKILL}/{FILE}": f"# Quickstart\n\n{FACT}\n",
    "pdf-forms/SKILL.md": (
        "---\nname: pdf-forms\ndescription: Fill and flatten PDF forms. Use for PDF form "
        "fields.\n---\n# PDF forms\n\nUse pypdf.\n"
    ),
    "release-notes/SKILL.md": (
        "---\nname: release-notes\ndescription: Write release notes from a git log. Use "
        "when preparing a release.\n---\n# Release notes\n\nGroup by kind: $ARGUMENTS\n"
    ),
    "triage/SKILL.md": (
        "---\nname: triage\ndescription: Triage a bug report in a subagent. Use for new "
        "bug reports.\ncontext: fork\n---\n# Triage\n\nReproduce, then label: $ARGUMENTS\n"
    ),
}


def write_skills(root: Path) -> Path:
    """The task's skills under `root/skills` (written here, so the test owns them)."""
    skills = root / "skills"
    for relpath, text in SKILLS.items():
        path = skills / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return skills


@dataclass
class TaskScript:
    """The model's side of the task. `next` decides from what the model is shown and the
    run's tool results so far, so one script serves any number of runs."""

    shown_before_load: str = ""
    """Everything the model was shown (instructions, tool descriptions) when it chose."""
    results: list[dict[str, Any]] = field(default_factory=list)
    """The last run's tool results, as envelopes."""

    def next(self, shown: str, results: list[Any]) -> tuple[str, dict[str, Any]] | str:
        """A tool call `(name, arguments)`, or the final answer as text."""
        self.results = [_envelope(r) for r in results]
        if not results:
            # The model loads only a skill it was told about: its description must be in
            # what the framework showed it.
            self.shown_before_load = shown
            if DESCRIPTION not in shown:
                return "I was shown no skill for this."
            return "skill_load", {"name": SKILL}
        if len(results) == 1:
            return "skill_read_file", {"skill": SKILL, "path": FILE}
        content = self.results[-1]["data"]["content"] if self.results[-1]["ok"] else ""
        return answer_from(content)

    def check(self, answer: str) -> None:
        """The task went as a model that was shown the skill would do it."""
        assert DESCRIPTION in self.shown_before_load
        loaded, read = self.results
        assert loaded["ok"] and loaded["data"]["name"] == SKILL, loaded
        assert "Read `references/quickstart.md`" in loaded["data"]["content"]
        assert read["ok"] and FACT in read["data"]["content"], read
        assert answer == ANSWER


def answer_from(content: str) -> str:
    return f"Answer: {content.strip().splitlines()[-1]}" if content else "no answer"


ANSWER = answer_from(FACT)


def _envelope(result: Any) -> dict[str, Any]:
    """A tool result as the envelope, whichever way the framework handed it back."""
    if isinstance(result, dict):
        return result
    if isinstance(result, str):
        loaded: dict[str, Any] = json.loads(result)
        return loaded
    if isinstance(result, list) and result and isinstance(result[0], dict):
        return _envelope(result[0]["text"])  # MCP content blocks: the envelope as text
    raise TypeError(f"unexpected tool result {result!r}")


@dataclass
class Calls:
    """A model that makes the given tool calls in order, then answers "done"; each
    framework's scripted model plays it like `TaskScript`."""

    calls: list[tuple[str, dict[str, Any]]]
    results: list[dict[str, Any]] = field(default_factory=list)

    def next(self, shown: str, results: list[Any]) -> tuple[str, dict[str, Any]] | str:
        self.results = [_envelope(r) for r in results]
        return self.calls[len(results)] if len(results) < len(self.calls) else "done"


@dataclass
class Host:
    """The host's side: a permission prompt that refuses, a subagent runner that records."""

    asked: list[tuple[str, str]] = field(default_factory=list)
    forked: list[tuple[str, str]] = field(default_factory=list)

    def ask(self, skill: Any, action: str) -> str:
        self.asked.append((skill.name, action))
        return "deny"

    def run(self, *, skill: Any, prompt: str, agent: str | None, model: str | None) -> Any:
        self.forked.append((skill.name, prompt))
        return "triaged: needs-repro"


HOST_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("skill_load", {"name": "pdf-forms"}),
    ("use_skill", {"skill": "triage", "args": "issue 7"}),
]


def project_asking_for_pdf_forms(root: Path) -> Path:
    """A project whose config asks the host before any `pdf-*` skill is used."""
    (root / ".git").mkdir()
    config = root / ".skillpack" / "config.toml"
    config.parent.mkdir()
    config.write_text('[permissions]\nask = ["pdf-*"]\n', encoding="utf-8")
    return root


def check_host_calls(host: Host, results: list[dict[str, Any]]) -> None:
    """The prompt was asked and its answer kept; the fork ran on the host's runner."""
    refused, forked = results
    assert host.asked == [("pdf-forms", "load")]
    assert not refused["ok"] and refused["error"]["code"] == "PERMISSION_DENIED", refused
    assert [name for name, _ in host.forked] == ["triage"]
    assert "Reproduce, then label: issue 7" in host.forked[0][1]
    assert forked["ok"] and forked["data"]["result"] == "triaged: needs-repro", forked


MENTION = "$release-notes for v2.0"
INJECTED = '<skill_content name="release-notes"'


DOCS = Path(__file__).resolve().parents[2] / "docs" / "frameworks"


def run_page(page: str, namespace: dict[str, Any]) -> list[str]:
    """Run every Python snippet of `docs/frameworks/<page>` in order, in one namespace
    (later snippets build on earlier ones, as a reader's would), from a folder that holds
    the task's `skills/`. The first snippet is the glue: at most 3 non-blank lines.
    `"python"` in a snippet names the interpreter that has skillpack; `namespace` holds
    what the page says is the reader's own (`model`, their agent class). Returns the
    snippets."""
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, f"{page} has Python snippets"
    commands = re.findall(
        r"^\$ .*$", "".join(re.findall(r"```console\n(.*?)```", text, re.S)), re.M
    )
    assert all("docs-test: skip (" in c for c in commands), commands  # none runs here
    glue = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(glue) <= 3, glue
    write_skills(Path.cwd())
    for block in blocks:
        code = block.replace('"python"', repr(sys.executable))
        exec(compile(code, str(DOCS / page), "exec"), namespace)  # noqa: S102 - our docs
    return blocks
