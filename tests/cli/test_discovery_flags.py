"""The catalog flags (`--root`, `--no-user`, `--no-system`, `--no-cache`, `--max-depth`,
`--max-dirs`) reach discovery as one `DiscoveryOptions` value, through every path a
command takes: a workspace (`list`), a session (`show`, `mcp --check`) and the app
server's discovery (`serve`)."""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import WriteSkill, record_calls
from skillpack import DiscoveryOptions
from skillpack.cli._app import cli
from skillpack.cli._options import CatalogOptions
from skillpack.discovery import _discover

FLAGS = ("--no-user", "--no-system", "--no-cache", "--max-depth", "1", "--max-dirs", "7")


def run(*args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, (result.exit_code, result.output, result.stderr)
    return result


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[DiscoveryOptions]:
    """The options of every discovery run."""

    def options_of(*args: Any, options: DiscoveryOptions | None = None, **kwargs: Any) -> Any:
        assert options is not None, "discovery ran without the command's options"
        return options

    return record_calls(monkeypatch, _discover, "discover_roots", options_of)


@pytest.fixture
def tree(tmp_path: Path, write_skill: WriteSkill) -> Path:
    root = tmp_path / "skills"
    write_skill("pdf", base=root)
    for index in range(5):
        write_skill(f"group{index}/deep/tool{index}", base=root)
    return root


def expected(root: Path) -> DiscoveryOptions:
    """What the flags ask for."""
    return DiscoveryOptions(
        extra_roots=[str(root)],
        include_user=False,
        include_system=False,
        use_cache=False,
        max_depth=1,
        max_dirs=7,
    )


def walked(root: Path) -> DiscoveryOptions:
    """What discovery runs with: the flags, and the config's `repo_skills_dir` and
    `folders_off` (none here: off, none), which no flag sets."""
    return replace(expected(root), repo_skills_dir=False, folders_off=())


def test_the_flags_make_one_value() -> None:
    flags = CatalogOptions(
        roots=("rel",),
        cwd=None,
        no_user=True,
        no_system=False,
        no_cache=True,
        max_depth=0,
        max_dirs=9,
    )
    assert flags.discovery() == DiscoveryOptions(
        extra_roots=[os.path.abspath("rel")],
        include_user=False,
        use_cache=False,
        max_depth=0,
        max_dirs=9,
    )
    unset = CatalogOptions(
        roots=(), cwd=None, no_user=False, no_system=False, no_cache=False
    ).discovery()
    assert unset == DiscoveryOptions()  # no flag: the config's bounds, every scope


@pytest.mark.parametrize("command", [["list"], ["show", "pdf"]], ids=["workspace", "session"])
def test_list_and_show_discover_with_the_flags(
    command: list[str], tree: Path, tmp_path: Path, runs: list[DiscoveryOptions]
) -> None:
    data = json.loads(
        run(*command, "--root", str(tree), "--cwd", str(tmp_path), *FLAGS, "--json").stdout
    )
    assert runs and all(options == walked(tree) for options in runs), runs
    if command == ["list"]:
        names = [s["name"] for s in data["skills"]]
        assert names == ["pdf"]  # the tools are deeper than --max-depth 1 reaches
        codes = {p["code"] for p in data["problems"]}
        assert "walk-truncated" in codes


def test_max_depth_zero_is_still_accepted_and_searches_the_root_alone(
    tree: Path, tmp_path: Path, runs: list[DiscoveryOptions]
) -> None:
    single = tree / "pdf"
    data = json.loads(
        run(
            "list",
            "--root",
            str(single),
            "--cwd",
            str(tmp_path),
            "--no-user",
            "--no-system",
            "--max-depth",
            "0",
            "--json",
        ).stdout
    )
    assert [s["name"] for s in data["skills"]] == ["pdf"]
    assert runs[-1].max_depth == 0


def test_without_bound_flags_the_config_decides(
    tree: Path, tmp_path: Path, runs: list[DiscoveryOptions]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".skillpack").mkdir()
    (tmp_path / ".skillpack" / "config.toml").write_text(
        "[discovery]\nmax_depth = 1\nmax_dirs = 4\n", encoding="utf-8"
    )
    run("list", "--root", str(tree), "--cwd", str(tmp_path), "--no-user", "--json")
    assert (runs[-1].max_depth, runs[-1].max_dirs) == (1, 4)
    run("list", "--root", str(tree), "--cwd", str(tmp_path), "--no-user", "--max-dirs", "50")
    assert (runs[-1].max_depth, runs[-1].max_dirs) == (1, 50)


@pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="needs the mcp extra")
def test_mcp_check_discovers_with_the_flags(
    tree: Path, tmp_path: Path, runs: list[DiscoveryOptions]
) -> None:
    result = run(
        "mcp", "--check", "--root", str(tree), "--cwd", str(tmp_path), *FLAGS, "--json", code=1
    )
    report = json.loads(result.stdout)
    assert [s["name"] for s in report["skills"]] == ["pdf"]
    assert runs and all(options == walked(tree) for options in runs)


def test_serve_hands_the_flags_to_the_app_servers_discovery(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.rpc import _server

    served: list[Any] = []
    monkeypatch.setattr(_server, "serve_stdio", lambda options, **_: served.append(options))
    run("serve", "--root", str(tree), "--cwd", str(tmp_path), *FLAGS)
    (options,) = served
    assert options.discovery.cwd == str(tmp_path)
    assert options.discovery.options == expected(tree)


def test_a_warm_list_and_session_see_a_codex_policy_edited_in_place(
    tmp_path: Path, write_skill: WriteSkill
) -> None:
    """`allow_implicit_invocation: true ` rewritten as `false` at the same size with the
    mtime restored: warm runs of `list --json` and `Session.open` agree with a run
    without the index, and the model is no longer offered the skill."""
    from conftest import rewrite_keeping_mtime_and_size
    from skillpack import Session

    root = tmp_path / "skills"
    folder = write_skill(
        "quiet",
        base=root,
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: true \n"},
    )
    where = ("--root", str(root), "--no-user", "--no-system")

    def listed(*flags: str) -> dict[str, bool]:
        data = json.loads(run("list", "--json", *where, *flags).output)
        return {s["name"]: s["model_invocable"] for s in data["skills"]}

    def offered(**kwargs: Any) -> list[str]:
        session = Session.open(
            cwd=str(tmp_path), roots=[str(root)], include_user=False, include_system=False, **kwargs
        )
        try:
            return [s.name for s in session.skills.model_skills()]
        finally:
            session.close()

    assert listed() == listed() == {"quiet": True}
    assert offered() == ["quiet"]
    sidecar = folder / "agents" / "openai.yaml"
    rewrite_keeping_mtime_and_size(
        sidecar, sidecar.read_text(encoding="utf-8").replace("true ", "false")
    )

    assert listed() == listed("--no-cache") == {"quiet": False}
    assert offered() == offered(use_cache=False) == []
