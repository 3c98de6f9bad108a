"""`[auth]` and `[[auth.grant]]` in config.toml: parsed, merged, and bad entries reported."""

from __future__ import annotations

from skillpack.config._schema import merge_layers, parse_config
from skillpack.select._grants import Grant

AUTH = """
[auth]
jwks = "keys/jwks.json"
issuer = "https://idp.example/realms/team"
audience = "https://skills.example/mcp"
required_scopes = ["skills.read"]

[[auth.grant]]
claim = "realm_access.roles"
value = "finance"
skills = ["finance-*", "public-*"]

[[auth.grant]]
claim = "groups"
value = "/eng"
skills = ["repo:*"]
"""


def test_the_auth_table_and_its_grants_are_read() -> None:
    layer, problems = parse_config(AUTH, path="/p/.skillpack/config.toml", base="/p")
    assert problems == ()
    config = merge_layers([layer])
    assert config.auth_jwks == "/p/keys/jwks.json"  # a file is relative to the project
    assert config.auth_issuer == "https://idp.example/realms/team"
    assert config.auth_audience == "https://skills.example/mcp"
    assert config.auth_required_scopes == ("skills.read",)
    assert config.auth_grants == (
        Grant(claim="realm_access.roles", value="finance", skills=("finance-*", "public-*")),
        Grant(claim="groups", value="/eng", skills=("repo:*",)),
    )
    assert config.to_dict()["auth"]["grant"][1] == {
        "claim": "groups",
        "value": "/eng",
        "skills": ["repo:*"],
    }


def test_a_jwks_url_stays_a_url_and_the_project_layer_wins() -> None:
    user, _ = parse_config(AUTH, path="/home/u/config.toml", base="/home/u")
    project, _ = parse_config(
        '[auth]\njwks = "https://idp.example/certs"\n', path="/p/c.toml", base="/p"
    )
    config = merge_layers([user, project])
    assert config.auth_jwks == "https://idp.example/certs"
    assert len(config.auth_grants) == 2


def test_a_malformed_grant_is_a_problem_naming_the_key_and_the_rest_applies() -> None:
    text = '[auth]\nissuer = "https://i"\n[[auth.grant]]\nclaim = "groups"\nskills = "x"\n'
    layer, problems = parse_config(text, path="/p/c.toml", base="/p")
    (problem,) = problems
    assert problem.code == "config-value-invalid"
    assert problem.field == "auth.grant"
    assert "[[auth.grant]]" in problem.message
    assert merge_layers([layer]).auth_issuer == "https://i"
    assert merge_layers([layer]).auth_grants == ()
