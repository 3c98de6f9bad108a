"""Plugin manifests and the walk: a hostile tree never hangs or
breaks discovery; the one bad file is a problem of its own plugin or skill.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hostile_inputs import huge_hex, run_isolated

from conftest import WriteSkill
from skillpack import discover
from skillpack._model import Root

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def plugin_tree(tmp_path: Path, write_skill: WriteSkill) -> Path:
    plugin = tmp_path / "root" / "tools"
    write_skill("skills/alpha", base=plugin)
    (plugin / ".claude-plugin").mkdir()
    return plugin / ".claude-plugin" / "plugin.json"


def discover_in_child(root: Path) -> str:
    return f"""
        from skillpack import discover
        from skillpack._model import Root
        catalog = discover(roots=[Root(path={str(root)!r}, scope="extra")], use_cache=False,
                           include_user=False, include_system=False)
        print(" ".join(s.qualified_name for s in catalog.skills))
        print(" ".join(p.code for p in catalog.problems))
    """


@needs_fifo
def test_plugin_manifest_that_is_a_fifo_is_a_problem_not_a_hang(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    manifest = plugin_tree(tmp_path, write_skill)
    os.mkfifo(manifest)
    done = run_isolated(discover_in_child(tmp_path / "root"), timeout=20)
    assert done.returncode == 0, "the walk hung on the FIFO" if done.returncode is None else ""
    skills, problems = done.stdout.splitlines()
    assert skills == "tools:alpha"
    assert problems == "plugin-json-invalid"


def test_deeply_nested_plugin_manifest_is_a_problem_of_that_plugin(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    plugin_tree(tmp_path, write_skill).write_text("[" * 100_000, encoding="utf-8")
    catalog = discover(roots=[Root(path=str(tmp_path / "root"), scope="extra")], use_cache=False)
    assert [s.qualified_name for s in catalog.skills] == ["tools:alpha"]
    assert [p.code for p in catalog.problems] == ["plugin-json-invalid"]


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe{}", '{"name": "' + "x" * 10 + '"' + " " * 1_100_000 + "}"],
    ids=["not UTF-8", "over the size limit"],
)
def test_plugin_manifest_that_cannot_be_decoded_is_a_problem(
    tmp_path: Path, write_skill: WriteSkill, content: bytes | str
) -> None:
    manifest = plugin_tree(tmp_path, write_skill)
    if isinstance(content, str):
        manifest.write_text(content, encoding="utf-8")
    else:
        manifest.write_bytes(content)
    catalog = discover(roots=[Root(path=str(tmp_path / "root"), scope="extra")], use_cache=False)
    assert [s.qualified_name for s in catalog.skills] == ["tools:alpha"]
    assert [p.code for p in catalog.problems] == ["plugin-json-invalid"]


def test_plugin_manifest_that_is_a_directory_is_a_problem(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    plugin_tree(tmp_path, write_skill).mkdir()
    catalog = discover(roots=[Root(path=str(tmp_path / "root"), scope="extra")], use_cache=False)
    assert [s.qualified_name for s in catalog.skills] == ["tools:alpha"]
    assert [p.code for p in catalog.problems] == ["plugin-json-invalid"]


@needs_fifo
def test_codex_sidecar_that_is_a_fifo_is_a_warning_not_a_hang(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    folder = write_skill("root/alpha")
    (folder / "agents").mkdir()
    sidecar = folder / "agents" / "openai.yaml"
    sidecar.write_text("policy: {}\n", encoding="utf-8")
    # The walk sees a regular file; it becomes a FIFO before it is read.
    code = discover_in_child(tmp_path / "root").replace(
        "from skillpack import discover",
        f"""import os
        from skillpack.discovery import _walk
        real_sidecar = _walk.codex_sidecar
        def swapped(folder):
            found = real_sidecar(folder)
            os.unlink({str(sidecar)!r}); os.mkfifo({str(sidecar)!r})
            return found
        _walk.codex_sidecar = swapped
        from skillpack import discover""",
    )
    done = run_isolated(code, timeout=20)
    assert done.returncode == 0, "hung on the FIFO" if done.returncode is None else done.stderr
    skills, problems = done.stdout.splitlines()
    assert skills == "extra:alpha"
    assert problems == "codex-yaml-invalid"


def test_one_skill_with_a_huge_integer_does_not_hide_the_others(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    write_skill("root/good")
    write_skill("root/bad", frontmatter=f"name: bad\ndescription: d\nmetadata:\n  n: {huge_hex()}")
    catalog = discover(roots=[Root(path=str(tmp_path / "root"), scope="extra")], use_cache=False)
    assert sorted(s.name for s in catalog.skills) == ["bad", "good"]


@needs_fifo
def test_a_fifo_or_socket_named_skill_md_is_a_reported_problem(tmp_path: Path) -> None:
    import socket as socket_module
    import subprocess
    import sys

    root = tmp_path / "skills"
    (root / "piped").mkdir(parents=True)
    os.mkfifo(root / "piped" / "SKILL.md")
    (root / "sock").mkdir()
    listener = socket_module.socket(socket_module.AF_UNIX)
    try:
        listener.bind(str(root / "sock" / "SKILL.md"))
        for command in (["list"], ["validate", str(root)]):
            done = subprocess.run(
                [sys.executable, "-c", "from skillpack.cli import main; main()", *command]
                + ["--json"]
                + (
                    ["--root", str(root), "--no-user", "--no-system"] if command == ["list"] else []
                ),
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            text = done.stdout
            assert "named pipe (FIFO)" in text and "a socket" in text, (command, done)
            assert "file-unreadable" in text
    finally:
        listener.close()
