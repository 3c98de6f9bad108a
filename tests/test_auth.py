"""Bearer JWTs (`skillpack._auth`): what is accepted, what is refused and why, the
key set's fetches, and the RFC 9728 answers."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from auth_support import AUDIENCE, ISSUER, Issuer, JwksServer, bad_tokens
from skillpack._auth import (
    JWKS_REFETCH_SECONDS,
    JWKS_TTL_SECONDS,
    AuthRefused,
    AuthSettings,
    BearerAuth,
    JwksKeys,
    JwtVerifier,
    audit,
    bearer_token,
    challenge,
    metadata_document,
    resource_metadata_url,
    token_scopes,
)
from skillpack._errors import UsageError


@pytest.fixture(scope="module")
def issuer() -> Issuer:
    return Issuer()


def verifier_for(issuer: Issuer, tmp_path: Path, **settings: object) -> JwtVerifier:
    jwks = issuer.write_jwks(tmp_path / "jwks.json")
    options: dict[str, object] = {"jwks": str(jwks), "issuer": ISSUER, "audience": AUDIENCE}
    options.update(settings)
    verifier = JwtVerifier(AuthSettings(**options))  # type: ignore[arg-type]
    verifier.keys.load()
    return verifier


def test_rs256_and_es256_tokens_of_the_issuer_are_accepted(issuer: Issuer, tmp_path: Path) -> None:
    verifier = verifier_for(issuer, tmp_path)
    for algorithm in ("RS256", "ES256"):
        principal = verifier.verify(issuer.token(algorithm=algorithm, groups=["finance"]))
        assert principal.subject == "alice"
        assert principal.client_id == "agent"
        assert principal.claims["groups"] == ["finance"]


@pytest.mark.parametrize(
    "kind",
    [
        "expired",
        "wrong audience",
        "wrong issuer",
        "another key",
        "alg none",
        "hmac with the public key",
        "garbage",
    ],
)
def test_every_bad_token_is_refused_as_an_invalid_token(
    issuer: Issuer, tmp_path: Path, kind: str
) -> None:
    verifier = verifier_for(issuer, tmp_path)
    token = bad_tokens(issuer)[kind]
    assert token is not None
    with pytest.raises(AuthRefused) as refused:
        verifier.verify(token)
    assert refused.value.status == 401
    assert refused.value.error == "invalid_token"
    assert refused.value.code in ("token-invalid", "token-expired")


def test_a_token_not_valid_yet_and_one_without_exp_are_refused(
    issuer: Issuer, tmp_path: Path
) -> None:
    verifier = verifier_for(issuer, tmp_path)
    with pytest.raises(AuthRefused, match="not valid yet"):
        verifier.verify(issuer.token(nbf=int(time.time()) + 3600))
    with pytest.raises(AuthRefused, match="exp"):
        verifier.verify(issuer.token(exp=None))


def test_a_token_expired_within_the_leeway_still_passes(issuer: Issuer, tmp_path: Path) -> None:
    verifier = verifier_for(issuer, tmp_path)
    assert verifier.verify(issuer.token(exp=int(time.time()) - 5)).subject == "alice"


def test_a_missing_required_scope_is_403_insufficient_scope(issuer: Issuer, tmp_path: Path) -> None:
    verifier = verifier_for(issuer, tmp_path, required_scopes=("skills.read",))
    with pytest.raises(AuthRefused) as refused:
        verifier.verify(issuer.token(scope="openid profile"))
    assert (refused.value.status, refused.value.error) == (403, "insufficient_scope")
    assert verifier.verify(issuer.token(scope="openid skills.read")).scopes == (
        "openid",
        "skills.read",
    )
    assert verifier.verify(issuer.token(scp=["skills.read"])).scopes == ("skills.read",)


def test_a_token_without_a_kid_uses_the_one_key_that_fits(issuer: Issuer, tmp_path: Path) -> None:
    verifier = verifier_for(issuer, tmp_path)
    import jwt

    token = jwt.encode(issuer.claims(), issuer.ec, algorithm="ES256")
    assert verifier.verify(token).subject == "alice"


def test_a_key_set_url_is_fetched_once_then_only_for_a_new_kid_and_at_most_so_often(
    tmp_path: Path,
) -> None:
    first = Issuer(rsa_kid="k1", ec_kid="e1")
    served = JwksServer(first)
    now = [1000.0]
    with served.running():
        keys = JwksKeys(served.url, clock=lambda: now[0])
        verifier = JwtVerifier(
            AuthSettings(jwks=served.url, issuer=ISSUER, audience=AUDIENCE), keys=keys
        )
        keys.load()
        for _ in range(3):
            verifier.verify(first.token())
        assert served.fetches == 1
        rotated = Issuer(rsa_kid="k2", ec_kid="e2")
        served.issuer = rotated
        assert verifier.verify(rotated.token()).subject == "alice"  # a new kid: fetched
        assert served.fetches == 2
        with pytest.raises(AuthRefused):
            verifier.verify(Issuer(rsa_kid="k3").token())  # unknown, too soon: no fetch
        assert served.fetches == 2
        now[0] += JWKS_REFETCH_SECONDS
        with pytest.raises(AuthRefused):
            verifier.verify(Issuer(rsa_kid="k4").token())  # unknown, later: fetched again
        assert served.fetches == 3
        now[0] += JWKS_TTL_SECONDS
        verifier.verify(rotated.token())  # stale: fetched again
        assert served.fetches == 4


def test_a_refetch_that_fails_keeps_the_keys_held(issuer: Issuer) -> None:
    served = JwksServer(issuer)
    now = [0.0]
    with served.running():
        keys = JwksKeys(served.url, clock=lambda: now[0])
        keys.load()
    verifier = JwtVerifier(
        AuthSettings(jwks=served.url, issuer=ISSUER, audience=AUDIENCE), keys=keys
    )
    now[0] += JWKS_TTL_SECONDS  # stale, and the server is gone
    assert verifier.verify(issuer.token()).subject == "alice"


def test_key_sets_that_cannot_be_used_are_clear_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}), encoding="utf-8")
    with pytest.raises(UsageError, match="no RSA or P-256 EC signing key"):
        JwksKeys(str(empty)).load()
    with pytest.raises(UsageError, match="Cannot read the JWKS file"):
        JwksKeys(str(tmp_path / "missing.json")).load()
    (tmp_path / "text.json").write_text("nope", encoding="utf-8")
    with pytest.raises(UsageError, match="not JSON"):
        JwksKeys(str(tmp_path / "text.json")).load()
    with pytest.raises(UsageError, match="plain http"):
        AuthSettings(jwks="http://idp.example/certs", issuer=ISSUER, audience=AUDIENCE).checked()


def test_the_challenge_points_at_the_metadata_and_says_why() -> None:
    with pytest.raises(AuthRefused) as missing:
        bearer_token(None)
    url = resource_metadata_url(AUDIENCE, host="127.0.0.1:9", path="/mcp")
    assert url == "https://skills.example/.well-known/oauth-protected-resource/mcp"
    assert challenge(missing.value, metadata_url=url) == f'Bearer resource_metadata="{url}"'
    bad = AuthRefused(401, "token-invalid", 'The "token" is bad.', error="invalid_token")
    assert challenge(bad, metadata_url=url, scopes=["a"]) == (
        'Bearer error="invalid_token", error_description="The token is bad.", '
        f'scope="a", resource_metadata="{url}"'
    )
    assert resource_metadata_url("api://skills", host="h:1", path="/rpc") == (
        "http://h:1/.well-known/oauth-protected-resource/rpc"
    )


def test_the_metadata_document_names_the_resource_and_its_issuer(
    issuer: Issuer, tmp_path: Path
) -> None:
    auth = BearerAuth(verifier_for(issuer, tmp_path), endpoint="/mcp")
    assert "/.well-known/oauth-protected-resource/mcp" in auth.paths
    assert "/.well-known/oauth-protected-resource" in auth.paths
    document = metadata_document(auth.settings)
    assert document == {
        "resource": AUDIENCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "resource_name": "skillpack",
    }


def test_scopes_come_from_scope_or_scp() -> None:
    assert token_scopes({"scope": "a b", "scp": ["c", "a"]}) == ("a", "b", "c")
    assert token_scopes({}) == ()


def test_an_audit_line_is_one_json_object_without_the_token(
    issuer: Issuer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    token = issuer.token()
    principal = verifier_for(issuer, tmp_path).verify(token)
    with caplog.at_level(logging.INFO, logger="skillpack.audit"):
        audit("mcp", principal, method="tools/call", tool="skill_load", skill="pdf", uri=None)
    (record,) = caplog.records
    assert json.loads(record.getMessage()) == {
        "server": "mcp",
        "sub": "alice",
        "client": "agent",
        "method": "tools/call",
        "tool": "skill_load",
        "skill": "pdf",
    }
    assert token not in record.getMessage()


def test_an_algorithm_outside_the_two_is_refused_even_with_the_right_key(
    issuer: Issuer, tmp_path: Path
) -> None:
    import jwt

    verifier = verifier_for(issuer, tmp_path)
    for algorithm in ("RS512", "PS256"):
        token = jwt.encode(
            issuer.claims(), issuer.rsa, algorithm=algorithm, headers={"kid": "rsa-1"}
        )
        with pytest.raises(AuthRefused, match="not accepted"):
            verifier.verify(token)


def test_a_key_set_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    from skillpack._auth import JWKS_MAX_BYTES

    big = tmp_path / "big.json"
    big.write_text(json.dumps({"keys": [], "pad": "x" * JWKS_MAX_BYTES}), encoding="utf-8")
    with pytest.raises(UsageError, match="over"):
        JwksKeys(str(big)).load()
