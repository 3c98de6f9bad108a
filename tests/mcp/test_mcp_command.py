"""`skillpack mcp` on the command line: what it refuses before serving, and its help."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli
from skillpack.mcp import _extra


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["mcp", *args])
    return result.exit_code, result.output


def test_listening_beyond_loopback_needs_a_token() -> None:
    code, output = invoke("--transport", "http", "--host", "0.0.0.0", "--no-user")
    assert code == 2
    assert "--token-file" in output


@pytest.mark.parametrize("content", ["", "two words\n"])
def test_a_token_file_must_hold_one_token(tmp_path: Path, content: str) -> None:
    token = tmp_path / "token"
    token.write_text(content, encoding="utf-8")
    code, output = invoke("--transport", "http", "--token-file", str(token))
    assert code == 2
    assert "must hold one token" in output


def test_a_missing_token_file_is_named(tmp_path: Path) -> None:
    code, output = invoke("--transport", "http", "--token-file", str(tmp_path / "nope"))
    assert code == 2
    assert "Cannot read the token file" in output


def test_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, output = invoke(
            "--transport", "http", "--port", str(port), "--no-user", "--cwd", str(tmp_path)
        )
    assert code == 2
    assert f"Cannot listen on 127.0.0.1:{port}" in output


def test_without_the_sdk_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extra, "installed_version", lambda name: None)
    code, output = invoke("--no-user")
    assert code == 2
    assert "pip install 'skillpack[mcp]'" in output


def test_an_sdk_of_another_major_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extra, "installed_version", lambda name: "1.30.0")
    code, output = invoke("--no-user")
    assert code == 2
    assert "mcp>=2.3,<3 (installed: 1.30.0)" in output


@pytest.mark.parametrize("name", ["mcp", "uvicorn", "click", "no-such-distribution"])
def test_the_installed_version_is_the_one_importlib_metadata_gives(name: str) -> None:
    try:
        expected: str | None = metadata.version(name)
    except metadata.PackageNotFoundError:
        expected = None
    assert _extra.installed_version(name) == expected


def test_the_first_installed_copy_on_the_path_counts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dist = tmp_path / "mcp-1.30.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mcp\nVersion: 1.30.0\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert _extra.installed_version("mcp") == metadata.version("mcp") == "1.30.0"
    egg = tmp_path / "eggs"
    (egg / "mcp.egg-info").mkdir(parents=True)
    (egg / "mcp.egg-info" / "PKG-INFO").write_text(
        "Metadata-Version: 1.2\nName: mcp\nVersion: 0.9\n"
    )
    monkeypatch.setattr(sys, "path", [str(egg), *sys.path])
    assert _extra.installed_version("mcp") == metadata.version("mcp") == "0.9"
