"""The `--auth-*` flags and `[auth]` on both servers: what is refused before serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from auth_support import GRANTS, Issuer, write_auth_config
from skillpack._errors import UsageError
from skillpack.cli._app import cli
from skillpack.cli._auth_opts import server_auth
from skillpack.config._files import load_config


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("command", [["mcp"], ["serve", "--transport", "stdio"]])
def test_the_auth_flags_need_http(command: list[str]) -> None:
    code, output = invoke(*command, "--auth-jwks", "k.json", "--no-user")
    assert code == 2
    assert "over HTTP" in output


def test_jwt_auth_needs_issuer_and_audience(tmp_path: Path) -> None:
    jwks = Issuer().write_jwks(tmp_path / "jwks.json")
    code, output = invoke(
        "mcp", "--transport", "http", "--auth-jwks", str(jwks), "--no-user", "--cwd", str(tmp_path)
    )
    assert code == 2
    assert "--auth-issuer and --auth-audience" in output


def test_an_issuer_without_keys_and_grants_without_auth_are_refused(tmp_path: Path) -> None:
    code, output = invoke(
        "serve",
        "--transport",
        "http",
        "--auth-issuer",
        "https://i",
        "--no-user",
        "--cwd",
        str(tmp_path),
    )
    assert code == 2
    assert "--auth-jwks URL|FILE" in output
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".skillpack").mkdir()
    (project / ".skillpack" / "config.toml").write_text(
        '[[auth.grant]]\nclaim = "groups"\nvalue = "x"\nskills = ["*"]\n', "utf-8"
    )
    with pytest.raises(UsageError, match=r"\[\[auth.grant\]\] is set but \[auth\] has no `jwks`"):
        config = load_config(cwd=str(project), user=False)[0]
        server_auth(config=config, jwks=None, issuer=None, audience=None, endpoint="/mcp")


def test_a_token_file_and_jwt_auth_do_not_mix(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_auth_config(project, jwks=str(Issuer().write_jwks(tmp_path / "jwks.json")))
    token = tmp_path / "token"
    token.write_text("s3cret\n", encoding="utf-8")
    code, output = invoke(
        "mcp", "--transport", "http", "--token-file", str(token), "--no-user", "--cwd", str(project)
    )
    assert code == 2
    assert "not both" in output
    code, output = invoke(
        "serve",
        "--transport",
        "http",
        "--token-file",
        str(token),
        "--no-user",
        "--cwd",
        str(project),
    )
    assert code == 2
    assert "not both" in output  # the same refusal as mcp


def test_grants_and_catalog_instructions_do_not_mix(tmp_path: Path) -> None:
    project = tmp_path / "project"
    jwks = Issuer().write_jwks(tmp_path / "jwks.json")
    write_auth_config(project, jwks=str(jwks), grants=GRANTS)
    code, output = invoke(
        "mcp", "--transport", "http", "--catalog-instructions", "--no-user", "--cwd", str(project)
    )
    assert code == 2
    assert "--catalog-instructions cannot be used with [[auth.grant]]" in output


def test_a_jwks_that_cannot_be_read_stops_the_start(tmp_path: Path) -> None:
    code, output = invoke(
        "mcp",
        "--transport",
        "http",
        "--auth-jwks",
        str(tmp_path / "missing.json"),
        "--auth-issuer",
        "https://i",
        "--auth-audience",
        "a",
        "--no-user",
        "--cwd",
        str(tmp_path),
    )
    assert code == 2
    assert "Cannot read the JWKS file" in output


def test_without_pyjwt_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from skillpack import _auth, _errors

    monkeypatch.setitem(sys.modules, "jwt", None)
    with pytest.raises(_errors.UsageError, match=r"skillpack\[auth\]"):
        _auth.require_auth()
