"""The injection corpus: arguments, folder and file names, and skill bodies that try to
break out of a shell policy. Every payload tries to create a `pwned-*` file; the policy
allows only `echo safe-*`. After each load no such file may exist anywhere, and the
allowed control command must have run (so preprocessing was really on).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import root_session
from skillpack.runtime._shell import ShellPolicy

CONTROL = "!`echo safe-ok`"

POLICIES = {
    "no-shell": ShellPolicy(allow=("echo safe-*",), timeout=5),
    "shell": ShellPolicy(allow=("echo safe-*", "cat *"), timeout=5, shell=True),
}

ARGUMENTS = [
    "!`touch pwned-a1`",
    "$(touch pwned-a2)",
    "`touch pwned-a3`",
    "x; touch pwned-a4",
    "x && touch pwned-a5",
    "x | sh -c 'touch pwned-a6'",
    "x\n!`touch pwned-a7`",
    "```!\ntouch pwned-a8\n```",
    "safe-x; touch pwned-a9",
    "${IFS}touch${IFS}pwned-a10",
    "'; touch pwned-a11; echo '",
]

BODIES = [
    "```\n!`touch pwned-b1`\n```\n",
    "`!`touch pwned-b2``\n",
    "~~~\n!`touch pwned-b3`\n~~~\n",
    "````md\n```!\ntouch pwned-b4\n```\n````\n",
    "    !`touch pwned-b5`\n",
    "!`echo safe-1; touch pwned-b6`\n",
    "!`echo safe-1 && touch pwned-b7`\n",
    "!`echo safe-$(touch pwned-b8)`\n",
    "!`echo safe-`touch pwned-b9``\n",
    "!`echo safe-1 | sh -c 'touch pwned-b10'`\n",
    "!`echo safe-1 > pwned-b11`\n",
    "```!\necho safe-1\ntouch pwned-b12\n```\n",
    "!`echo safe-1\u2028touch pwned-b13`\n",
    "！`touch pwned-b14`\n",
    "!ˋtouch pwned-b15ˋ\n",
    "!`ecｈo safe-1; touch pwned-b16`\n",
    "<!-- !`touch pwned-b17` -->\n",
    "!`echo safe-${IFS}x; touch pwned-b18`\n",
    "!`echo safe-1 & touch pwned-b19`\n",
    "!`echo safe-1\\\ntouch pwned-b20`\n",
    "!`echo safe-1 $1`\n",
    "Run !`echo safe-$ARGUMENTS`\n",
    "- item\n\n  ```\n  !`touch pwned-b21`\n  ```\n",
    "!`touch pwned-b22`\n",
    "!`sh -c 'touch pwned-b23'`\n",
    "!`echo safe-1 %0Atouch pwned-b24`\n",
    "!`echo safe-1 \x07touch pwned-b25`\n",
]

FOLDERS = [
    "x; touch pwned-d1",
    "$(touch pwned-d2)",
    "`touch pwned-d3`",
    "a b'c\"d",
    "!`touch pwned-d4`",
]


def load(root: Path, *, args: str, policy: ShellPolicy) -> str:
    session = root_session(root, shell=policy)
    text: str = session.load(name="target", args=args, invoker="user").text
    return text


def write(folder: Path, body: str, files: dict[str, str] | None = None) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: target\ndescription: Injection target. Use in tests.\n---\n{body}",
        encoding="utf-8",
    )
    for name, content in (files or {}).items():
        (folder / name).write_text(content, encoding="utf-8")


def assert_nothing_ran(tmp_path: Path, text: str) -> None:
    assert "safe-ok" in text and CONTROL not in text  # preprocessing was on
    assert sorted(p.name for p in tmp_path.rglob("pwned*") if p.is_file()) == []


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Relative payloads land in the working directory, which is inside tmp_path.
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("policy", POLICIES, ids=list(POLICIES))
@pytest.mark.parametrize("args", ARGUMENTS)
def test_arguments_never_execute(tmp_path: Path, policy: str, args: str) -> None:
    write(tmp_path / "skills" / "target", f"{CONTROL}\nTask: $ARGUMENTS and $0 and $1\n")
    text = load(tmp_path / "skills", args=args, policy=POLICIES[policy])
    assert_nothing_ran(tmp_path, text)
    assert args.split()[0] in text  # the argument reached the text, as text


@pytest.mark.parametrize("policy", POLICIES, ids=list(POLICIES))
@pytest.mark.parametrize("body", BODIES)
def test_skill_bodies_run_nothing_the_policy_did_not_allow(
    tmp_path: Path, policy: str, body: str
) -> None:
    write(tmp_path / "skills" / "target", f"{CONTROL}\n{body}")
    text = load(tmp_path / "skills", args="x", policy=POLICIES[policy])
    assert_nothing_ran(tmp_path, text)


@pytest.mark.parametrize("policy", POLICIES, ids=list(POLICIES))
@pytest.mark.parametrize("folder", FOLDERS)
def test_folder_and_file_names_never_execute(tmp_path: Path, policy: str, folder: str) -> None:
    files = {"data.txt": "data-file\n", "!`touch pwned-f1`": "", "$(touch pwned-f2)": ""}
    write(
        tmp_path / "skills" / folder,
        f"{CONTROL}\n!`cat ${{CLAUDE_SKILL_DIR}}/data.txt`\nDir: ${{SKILL_DIR}}\n",
        files,
    )
    text = load(tmp_path / "skills", args="x", policy=POLICIES[policy])
    assert_nothing_ran(tmp_path, text)
    assert "- !`touch pwned-f1`" in text  # the file listing is text, never preprocessed
