"""`--from`, `--poll`, `--insecure` and `--verify-key` on both servers: one spelling, the
same refusals, `[server] from`/`poll` from the config, and a first pull that fails
stopping the start with what, where and the fix."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skillpack.cli._app import cli
from skillpack.config._files import user_config_path

SERVERS = ["mcp", "serve"]
PINNED = "oci://127.0.0.1:9/team/skills@sha256:" + "a" * 64


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def run(command: str, root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, [command, "--root", str(root), "--no-user", *args])


@pytest.mark.parametrize("command", SERVERS)
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--from", "oci://127.0.0.1:9/team/skills:1"], "add --transport http"),
        (["--transport", "http", "--poll", "5"], "go with --from"),
        (["--transport", "http", "--insecure", "ghcr.io"], "go with --from"),
        (["--transport", "http", "--from", "./skills"], "is not an OCI collection"),
        (["--transport", "http", "--from", "oci://Not A Ref"], "is not an OCI reference"),
        (["--transport", "http", "--from", PINNED, "--poll", "5"], "pinned by digest"),
        (["--transport", "http", "--from", "oci://127.0.0.1:9/t:1", "--poll", "0.5"], "0.5"),
    ],
)
def test_both_servers_refuse_a_source_that_cannot_work_with_the_same_words(
    command: str, args: list[str], words: str, tmp_path: Path
) -> None:
    result = run(command, tmp_path, *args)
    assert result.exit_code != 0
    assert words in result.output


@pytest.mark.parametrize("command", SERVERS)
def test_a_first_pull_that_fails_stops_the_server_naming_the_reference_and_the_fix(
    command: str, tmp_path: Path
) -> None:
    reference = f"oci://127.0.0.1:{closed_port()}/team/skills:stable"
    result = run(command, tmp_path, "--transport", "http", "--port", "0", "--from", reference)
    assert result.exit_code != 0
    assert f"Cannot serve skills from {reference}" in result.output
    assert "cannot be reached" in result.output and "start it again" in result.output


def test_the_config_names_the_collection_when_no_flag_does(tmp_path: Path) -> None:
    reference = f"oci://127.0.0.1:{closed_port()}/team/skills:stable"
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[server]\nfrom = "{reference}"\npoll = 30\n', encoding="utf-8")
    args = ["mcp", "--root", str(tmp_path), "--transport", "http", "--port", "0"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    assert f"Cannot serve skills from {reference}" in result.output


def test_mcp_check_pulls_nothing_and_says_where_to_look_instead(tmp_path: Path) -> None:
    result = run("mcp", tmp_path, "--check", "--from", "oci://127.0.0.1:9/team/skills:1")
    assert result.exit_code != 0
    assert "--check builds the server from its folders" in result.output


@pytest.mark.parametrize("command", SERVERS)
def test_an_unusable_auth_flag_is_refused_before_the_first_pull(
    command: str, tmp_path: Path
) -> None:
    reference = f"oci://127.0.0.1:{closed_port()}/team/skills:stable"
    result = run(
        command, tmp_path, "--transport", "http", "--port", "0", "--from", reference,
        "--auth-issuer", "https://id.example",
    )  # fmt: skip
    assert result.exit_code != 0
    assert "--auth-issuer and --auth-audience need the issuer's keys" in result.output
    assert "Cannot serve skills from" not in result.output
