"""The flags `skillpack mcp` and `skillpack serve` share: one spelling, one meaning, one
default port; `serve`'s old spellings still work for a release and say so on stderr."""

from __future__ import annotations

import stat
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from skillpack._errors import UsageError
from skillpack.cli._app import cli
from skillpack.cli._server_flags import (
    DEFAULT_PORT,
    ServerFlags,
    chosen_token,
    read_token,
    server_options,
)

SHARED = ("--transport", "--host", "--port", "--token-file", "--token-file-out")


def flags(**given: object) -> ServerFlags:
    values: dict[str, object] = {
        "transport": "http",
        "host": "127.0.0.1",
        "port": DEFAULT_PORT,
        "token_file": None,
        "token_file_out": None,
    }
    values.update(given)
    return ServerFlags(**values)  # type: ignore[arg-type]


@click.command()
@server_options(legacy_serve=True)
def probe(server: ServerFlags) -> None:
    click.echo(repr(server))


def probed(*args: str) -> click.testing.Result:
    return CliRunner().invoke(probe, list(args))


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_both_servers_take_the_same_flags_with_the_same_defaults(command: str) -> None:
    found = cli.get_command(click.Context(cli), command)
    assert found is not None
    params = {p.name: p for p in found.params}
    names = {opt for p in params.values() for opt in p.opts}
    assert set(SHARED) <= names
    assert params["port"].default == DEFAULT_PORT == 8765
    assert params["host"].default == "127.0.0.1"
    assert list(params["transport"].type.choices) == ["stdio", "http"]  # type: ignore[attr-defined]


def test_transport_defaults_to_stdio_and_takes_http() -> None:
    assert "transport='stdio'" in probed().output
    assert "transport='http'" in probed("--transport", "http").output


@pytest.mark.parametrize("old", ["stdio", "http"])
def test_the_old_transport_flags_still_work_and_print_a_deprecation_line(old: str) -> None:
    result = probed(f"--{old}")
    assert result.exit_code == 0, result.output
    assert f"transport='{old}'" in result.stdout
    assert f"deprecated: serve --{old}; write --transport {old}" in result.stderr


def test_an_old_transport_flag_that_disagrees_with_transport_is_refused() -> None:
    result = probed("--http", "--transport", "stdio")
    assert result.exit_code == 2
    assert "--http and --transport stdio disagree" in result.output


def test_token_file_reads_the_token(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("  abc123  \n", encoding="utf-8")
    token = chosen_token(flags(token_file=path), command="mcp", always=False)
    assert token is not None
    assert (token.value, token.path, token.written) == ("abc123", path, False)
    assert chosen_token(flags(), command="mcp", always=False) is None


def test_token_file_out_writes_a_private_new_token(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_text("old\n", encoding="utf-8")
    token = chosen_token(flags(token_file_out=path), command="mcp", always=False)
    assert token is not None and token.written
    assert read_token(path) == token.value != "old"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_both_token_flags_are_refused(tmp_path: Path) -> None:
    both = flags(token_file=tmp_path / "a", token_file_out=tmp_path / "b")
    with pytest.raises(UsageError, match="not both"):
        chosen_token(both, command="serve", always=True)


def test_serve_token_file_naming_no_file_keeps_its_old_meaning_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "new-file"
    token = chosen_token(flags(token_file=path), command="serve", always=True)
    assert token is not None and token.written and read_token(path) == token.value
    assert "write --token-file-out for this" in capsys.readouterr().err
    with pytest.raises(UsageError, match="Cannot read the token file"):
        chosen_token(flags(token_file=tmp_path / "nope"), command="mcp", always=False)


def test_serve_writes_a_token_into_a_private_file_when_no_flag_names_one(
    isolated_home: Path,
) -> None:
    token = chosen_token(flags(), command="serve", always=True)
    assert token is not None and token.written
    assert token.path.parent == isolated_home / ".config" / "skillpack" / "serve"
    assert stat.S_IMODE(token.path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_both_servers_refuse_stateless_over_stdio_with_the_same_words(
    command: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        cli, [command, "--stateless", "--json", "--root", str(tmp_path), "--no-user"]
    )
    assert result.exit_code != 0
    assert "--stateless is for replicas over HTTP; add --transport http" in result.output
