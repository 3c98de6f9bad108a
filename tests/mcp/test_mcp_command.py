"""`skillpack mcp` on the command line: what it refuses before serving, and its help."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillpack.cli._app import cli


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
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)  # the module `mcp._extra` asks
    code, output = invoke("--no-user")
    assert code == 2
    assert "pip install 'skillpack[mcp]'" in output


def test_an_sdk_of_another_major_version_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "version", lambda name: "1.30.0")
    code, output = invoke("--no-user")
    assert code == 2
    assert "mcp>=2.3,<3 (installed: 1.30.0)" in output
