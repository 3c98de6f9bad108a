"""The OCI client's pieces: references, credentials as docker finds them, Bearer tokens."""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from install_support import write_skill
from oci_support import Registry, bearer_proxy, needs_registry, run_registry

from skillpack._errors import UsageError
from skillpack.install import approve_all, install
from skillpack.install._oci import (
    Credentials,
    OciClient,
    find_credentials,
    parse_challenge,
    parse_reference,
)
from skillpack.install._oci_publish import publish_oci
from skillpack.install._values import Limits

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "registry", "api", "repository", "tag", "digest"),
    [
        ("oci://ghcr.io/org/skills/x:1.0", "ghcr.io", "ghcr.io", "org/skills/x", "1.0", None),
        ("docker.io/alpine", "docker.io", "registry-1.docker.io", "library/alpine", None, None),
        (
            "oci://localhost:5000/a/b@" + DIGEST,
            "localhost:5000",
            "localhost:5000",
            "a/b",
            None,
            DIGEST,
        ),
        ("127.0.0.1:80/r:t@" + DIGEST, "127.0.0.1:80", "127.0.0.1:80", "r", "t", DIGEST),
    ],
)
def test_references_parse_with_docker_hub_mapped_to_its_api_host(
    text: str, registry: str, api: str, repository: str, tag: str | None, digest: str | None
) -> None:
    ref = parse_reference(text)
    assert (ref.registry, ref.api_host, ref.repository, ref.tag, ref.digest) == (
        registry,
        api,
        repository,
        tag,
        digest,
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("oci://ghcr.io", "names no repository"),
        ("oci://org/repo:1", "is not a registry host"),
        ("oci://ghcr.io/Org/Repo", "must be lowercase"),
        ("oci://ghcr.io/a:-bad", "the tag '-bad'"),
        ("oci://ghcr.io/a@sha256:xyz", "the digest 'sha256:xyz'"),
    ],
)
def test_bad_references_say_why_and_show_the_form(text: str, why: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_reference(text)
    assert why in str(caught.value) and "oci://REGISTRY/REPOSITORY" in str(caught.value)


def auth(user: str, secret: str) -> str:
    return base64.b64encode(f"{user}:{secret}".encode()).decode()


def test_credentials_come_from_docker_config_helpers_then_store_then_auths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "docker-credential-fake"
    helper.write_text(
        "#!/bin/sh\nread server\n"
        'printf \'{"Username":"helper-user","Secret":"helper-secret-for-%s"}\' "$server"\n'
    )
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    config_dir = tmp_path / "docker"
    config_dir.mkdir()
    (config_dir / "config.json").write_text(
        json.dumps(
            {
                "auths": {
                    "reg.example.com": {"auth": auth("plain", "plain-secret")},
                    "https://index.docker.io/v1/": {"auth": auth("hub", "hub-secret")},
                },
                "credHelpers": {"helped.example.com": "fake"},
            }
        )
    )
    monkeypatch.setenv("DOCKER_CONFIG", str(config_dir))
    assert find_credentials("reg.example.com") == Credentials(
        username="plain", secret="plain-secret"
    )
    assert find_credentials("docker.io") == Credentials(username="hub", secret="hub-secret")
    helped = find_credentials("helped.example.com")
    assert helped == Credentials(
        username="helper-user", secret="helper-secret-for-helped.example.com"
    )
    assert "helper-secret" not in repr(helped)
    assert find_credentials("other.example.com") is None
    (config_dir / "config.json").write_text(json.dumps({"credsStore": "fake"}))
    assert find_credentials("any.example.com") == Credentials(
        username="helper-user", secret="helper-secret-for-any.example.com"
    )
    (config_dir / "config.json").write_text("{not json")
    with pytest.raises(UsageError, match="DOCKER_CONFIG"):
        find_credentials("reg.example.com")


def test_without_docker_config_the_home_file_is_read(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    (isolated_home / ".docker").mkdir()
    (isolated_home / ".docker" / "config.json").write_text(
        json.dumps({"auths": {"r.example.com": {"username": "u", "password": "p"}}})
    )
    assert find_credentials("r.example.com") == Credentials(username="u", secret="p")


def test_challenges_parse() -> None:
    kind, params = parse_challenge(
        'Bearer realm="https://auth.example.com/token",service="registry",scope="repository:a:pull"'
    )
    assert kind == "bearer"
    assert params == {
        "realm": "https://auth.example.com/token",
        "service": "registry",
        "scope": "repository:a:pull",
    }
    assert parse_challenge('Basic realm="x"') == ("basic", {"realm": "x"})


def test_plain_http_is_refused_for_a_registry_that_is_not_loopback_unless_insecure() -> None:
    client = OciClient("registry.example.com", limits=Limits())
    try:
        assert client.base.startswith("https://")
        assert not client.loopback
    finally:
        client.close()


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with run_registry(tmp_path_factory.mktemp("client-registry")) as running:
        yield running


@needs_registry
def test_a_bearer_token_challenge_is_answered_with_the_docker_config_login(
    registry: Registry, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    write_skill(source, "tokened")
    publish_oci(str(source), f"{registry.host}/bearer/skills", tags=["1"])
    with bearer_proxy(registry, "robot", "robot-pass") as front:
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "none"))
        refused = install(f"oci://{front}/bearer/skills/tokened:1", approve=approve_all)
        (refusal,) = refused.refusals
        assert refusal.code == "auth-failed" and "no credentials were found" in refusal.message
        config = tmp_path / "docker"
        config.mkdir()
        (config / "config.json").write_text(
            json.dumps({"auths": {front: {"auth": auth("robot", "robot-pass")}}})
        )
        monkeypatch.setenv("DOCKER_CONFIG", str(config))
        outcome = install(f"oci://{front}/bearer/skills/tokened:1", approve=approve_all)
    assert outcome.ok, outcome.refusals
    assert "robot-pass" not in json.dumps(outcome.to_dict())
