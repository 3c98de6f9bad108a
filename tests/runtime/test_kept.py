"""Kept outputs: a warm `list --json` writes the document kept for an unchanged catalog,
and never one that any edit, config change or damage has made stale."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import record_calls
from skillpack._model import Root
from skillpack.cli import _catalog_cmds
from skillpack.cli._app import cli
from skillpack.cli._catalog_cmds import LIST_JSON
from skillpack.config._files import user_config_path
from skillpack.discovery._discover import discover_roots
from skillpack.discovery._options import DiscoveryOptions
from skillpack.discovery._scan import still_recorded
from skillpack.index._cache import KEPT_OUTPUTS, index_path
from skillpack.runtime._kept import kept_output


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Skill counts of every `list --json` that rendered (rather than wrote a kept copy)."""
    return record_calls(
        monkeypatch, _catalog_cmds, "skill_summaries_json", lambda skills, *_: len(skills)
    )


@pytest.fixture
def tree(tmp_path: Path, write_skill: Any) -> Path:
    root = tmp_path / "skills"
    write_skill("alpha", base=root)
    write_skill("beta", base=root, files={"scripts/run.sh": "echo hi\n"})
    write_skill("group/gamma", base=root)
    return root


def listing(root: Path, *extra: str) -> str:
    args = ["list", "--root", str(root), "--cwd", str(root.parent), "--no-user", "--no-system"]
    result = CliRunner().invoke(cli, [*args, "--json", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def fresh(root: Path) -> str:
    """What rendering from the files alone writes (no index read or written)."""
    return listing(root, "--no-cache")


def test_the_third_run_over_an_unchanged_catalog_writes_the_kept_document(
    tree: Path, renders: list[int]
) -> None:
    expected = fresh(tree)
    assert listing(tree) == expected  # cold: walks, parses, stores the snapshot
    assert listing(tree) == expected  # replayed as stored: renders and keeps
    assert renders == [3, 3, 3]
    assert listing(tree) == expected
    assert listing(tree) == expected
    assert renders == [3, 3, 3], "the last two runs wrote the kept document"


def _edit_description(root: Path) -> None:
    path = root / "alpha" / "SKILL.md"
    text = path.read_text()
    path.write_text(text.replace("A test skill.", "B test skill."))  # same size


def _add_skill(root: Path) -> None:
    (root / "delta").mkdir()
    (root / "delta" / "SKILL.md").write_text("---\nname: delta\ndescription: New.\n---\nBody\n")


def _nest_skill(root: Path) -> None:
    (root / "alpha" / "inner").mkdir()
    (root / "alpha" / "inner" / "SKILL.md").write_text(
        "---\nname: inner\ndescription: Nested.\n---\nBody\n"
    )


def _hide_skill_in_resources(root: Path) -> None:
    (root / "beta" / "scripts" / "SKILL.md").write_text(
        "---\nname: hidden\ndescription: In scripts.\n---\nBody\n"
    )


def _remove_skill(root: Path) -> None:
    shutil.rmtree(root / "group" / "gamma")


def _break_skill(root: Path) -> None:
    (root / "beta" / "SKILL.md").write_text("no frontmatter at all\n")


def _rename_folder(root: Path) -> None:
    (root / "group").rename(root / "team")


def _make_plugin(root: Path) -> None:
    (root / "group" / ".claude-plugin").mkdir()
    (root / "group" / ".claude-plugin" / "plugin.json").write_text('{"name": "tools"}')


def _remove_root(root: Path) -> None:
    shutil.rmtree(root)


EDITS: dict[str, Callable[[Path], None]] = {
    "description edited in place": _edit_description,
    "skill added": _add_skill,
    "skill nested in a skill": _nest_skill,
    "skill in a resource folder": _hide_skill_in_resources,
    "skill removed": _remove_skill,
    "frontmatter broken": _break_skill,
    "folder renamed": _rename_folder,
    "folder made a plugin": _make_plugin,
    "root removed": _remove_root,
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_no_edit_is_answered_with_a_stale_document(
    tree: Path, renders: list[int], edit: Callable[[Path], None]
) -> None:
    for _ in range(3):
        before = listing(tree)
    assert len(renders) == 2, "kept before the edit"
    edit(tree)
    after = fresh(tree)
    assert after != before
    for _ in range(2):
        assert listing(tree) == after
    settled = len(renders)
    for _ in range(2):
        assert listing(tree) == after
    assert len(renders) == settled, "kept again once unchanged"


def test_a_config_change_is_a_different_document(
    tmp_path: Path, write_skill: Any, renders: list[int]
) -> None:
    root = tmp_path / "skills"
    write_skill("alpha", base=root)
    args = ["list", "--root", str(root), "--cwd", str(tmp_path), "--no-system", "--json"]

    def run() -> str:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.stdout

    for _ in range(3):
        enabled = run()
    assert len(renders) == 2
    user_config = user_config_path()
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text('[skills]\ndisabled = ["alpha"]\n')
    disabled = run()
    assert '"enabled": false' in disabled
    assert '"enabled": true' in enabled
    assert run() == run() == disabled
    user_config.unlink()
    assert run() == enabled


def test_a_catalog_that_reads_the_environment_is_never_kept(
    tmp_path: Path, write_skill: Any, renders: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    sidecar = "dependencies:\n  tools:\n    - {type: env_var, value: DEPLOY_TOKEN}\n"
    write_skill("deploy", base=root, files={"agents/openai.yaml": sidecar})
    monkeypatch.delenv("DEPLOY_TOKEN", raising=False)
    for _ in range(3):
        lacking = listing(root)
    assert len(renders) == 3
    assert "DEPLOY_TOKEN" in lacking
    monkeypatch.setenv("DEPLOY_TOKEN", "x")
    present = listing(root)
    assert '"missing_dependencies": []' in present


def _output_rows(cache: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache) as conn:
        return list(conn.execute("SELECT scope, output FROM skill_cache_outputs"))


def test_a_damaged_kept_document_is_rendered_again(tree: Path, renders: list[int]) -> None:
    for _ in range(2):
        expected = listing(tree)
    index = index_path()
    ((scope, output),) = _output_rows(index)
    damaged = output.replace(b"alpha", b"alphb")
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE skill_cache_outputs SET output = ? WHERE scope = ?", (damaged, scope))
    assert listing(tree) == expected
    assert len(renders) == 3


def test_a_document_that_no_longer_holds_is_dropped(tree: Path) -> None:
    for _ in range(2):
        listing(tree)
    index = index_path()
    assert len(_output_rows(index)) == 1
    _add_skill(tree)
    options = DiscoveryOptions(extra_roots=(str(tree),), include_user=False, include_system=False)
    assert kept_output(LIST_JSON, options, cwd=str(tree.parent)) is None
    assert _output_rows(index) == []


def test_the_index_keeps_a_few_documents_the_latest_first(tmp_path: Path, write_skill: Any) -> None:
    roots = []
    for i in range(KEPT_OUTPUTS + 2):
        root = tmp_path / f"skills-{i}"
        write_skill(f"s{i}", base=root)
        roots.append(root)
        for _ in range(2):
            listing(root)
    rows = _output_rows(index_path())
    assert len(rows) == KEPT_OUTPUTS
    assert all(str(roots[-1]) in scope for scope, _ in rows[-1:])


def test_nothing_is_kept_without_the_index(tree: Path, renders: list[int]) -> None:
    for _ in range(3):
        listing(tree, "--no-cache")
    assert len(renders) == 3
    assert not index_path().exists()


def test_a_run_says_whether_the_index_held_its_catalog_as_is(tree: Path) -> None:
    roots = [Root(path=str(tree), scope="extra")]
    cold = discover_roots(roots)
    assert cold.stamp is None
    assert cold.recorded is not None
    warm = discover_roots(roots)
    assert warm.stamp is not None
    assert warm.recorded == cold.recorded
    assert all(still_recorded(root) for root in warm.recorded)
    _edit_description(tree)
    assert not all(still_recorded(root) for root in warm.recorded)
    edited = discover_roots(roots)
    assert edited.stamp is None
    assert edited.recorded is not None
    assert all(still_recorded(root) for root in edited.recorded)
    again = discover_roots(roots)
    assert again.stamp is not None
    assert again.stamp != warm.stamp, "the edit was stored: another generation"
    assert discover_roots(roots).stamp == again.stamp


def test_a_missing_root_is_recorded_as_missing(tmp_path: Path, write_skill: Any) -> None:
    gone = tmp_path / "not-yet"
    run = discover_roots([Root(path=str(gone), scope="extra")])
    assert run.stamp is not None
    assert run.recorded is not None
    (record,) = run.recorded
    assert still_recorded(record)
    gone.write_text("a file where the root was\n")
    assert not still_recorded(record), "another root-missing problem"
    gone.unlink()
    assert still_recorded(record)
    write_skill("late", base=gone)
    assert not still_recorded(record)
    (late,) = discover_roots([Root(path=str(gone), scope="extra")]).recorded or ()
    assert still_recorded(late)
    shutil.rmtree(gone)
    gone.write_text("a file where the root was\n")
    assert not still_recorded(late)


def test_a_root_with_a_link_is_never_recorded(tmp_path: Path, write_skill: Any) -> None:
    root = tmp_path / "skills"
    write_skill("alpha", base=root)
    write_skill("elsewhere", base=tmp_path / "other")
    (root / "linked").symlink_to(tmp_path / "other" / "elsewhere")
    assert discover_roots([Root(path=str(root), scope="extra")]).recorded is None
    assert discover_roots([Root(path=str(root), scope="extra")]).recorded is None


def test_a_record_of_another_shape_never_holds() -> None:
    assert not still_recorded(("not", "a", "record"))
    assert not still_recorded((("/x", "extra"), None, "", ()))
