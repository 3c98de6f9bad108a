"""Hostile registries as real servers on loopback: credentials and tokens go only to the
registry's own origin, and a blob is read no further than its descriptor's size."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hostile_registry import PASSWORD, TOKEN, hostile_registry, lying_blob_server
from install_support import write_skill

from skillpack.cli._app import cli
from skillpack.install import approve_all, install


def login(tmp_path: Path, config: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "docker"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.setenv("DOCKER_CONFIG", str(folder))


@pytest.mark.parametrize("auth", ["basic", "bearer"])
def test_publish_and_install_send_no_credential_to_an_upload_location_on_another_origin(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, auth: str
) -> None:
    source = tmp_path / "src"
    write_skill(source, "scoped")
    with hostile_registry(auth) as registry:
        login(tmp_path, registry.docker_config(), monkeypatch)
        repo = f"{registry.host}/hostile/skills"
        pushed = CliRunner().invoke(cli, ["publish", str(source), "--oci", repo, "--tag", "1"])
        assert pushed.exit_code == 0, pushed.output
        uploads = [r for r in registry.record.requests if r[0] == "PUT"]
        assert uploads, "the blobs went to the Location the registry gave"
        outcome = install(f"oci://{repo}/scoped:1", approve=approve_all)
        assert outcome.ok, outcome.refusals
        reads = [r for r in registry.record.requests if r[0] == "GET"]
        assert reads, "the blobs were read from where the registry redirected"
        assert registry.record.authorizations() == []
    seen = json.dumps(registry.record.requests)
    assert PASSWORD not in seen and TOKEN not in seen
    assert (isolated_home / ".agents" / "skills" / "scoped" / "SKILL.md").is_file()


def test_an_upload_location_over_plain_http_to_a_host_that_is_not_loopback_is_refused(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    write_skill(source, "scoped")
    # 192.0.2.1 is TEST-NET-1: the refusal comes before any connection is tried.
    with hostile_registry("basic", location_host="192.0.2.1:9") as registry:
        login(tmp_path, registry.docker_config(), monkeypatch)
        repo = f"{registry.host}/hostile/skills"
        pushed = CliRunner().invoke(
            cli, ["publish", str(source), "--oci", repo, "--tag", "1", "--insecure"]
        )
    assert pushed.exit_code != 0
    assert "http://192.0.2.1:9/upload/abc" in pushed.output
    assert "only https" in pushed.output
    assert PASSWORD not in pushed.output


def lying_manifest(declared: int) -> bytes:
    config = b"{}"
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": "application/vnd.agentskills.skill.v1",
            "config": {
                "mediaType": "application/vnd.agentskills.skill.config.v1+json",
                "digest": "sha256:" + hashlib.sha256(config).hexdigest(),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.agentskills.skill.content.v1.tar+gzip",
                    "digest": "sha256:" + "ab" * 32,
                    "size": declared,
                }
            ],
        }
    ).encode()


@pytest.mark.parametrize(("declared", "served"), [(1000, 40 * 1024 * 1024), (1000, 999)])
def test_a_blob_is_read_no_further_than_the_size_its_descriptor_declares(
    isolated_home: Path, declared: int, served: int
) -> None:
    with lying_blob_server(lying_manifest(declared), declared, served) as (host, sent):
        outcome = install(f"oci://{host}/liar/skill:1", approve=approve_all)
    (refusal,) = outcome.refusals
    assert refusal.code == "digest-mismatch"
    assert f"the manifest says {declared}" in refusal.message
    if served > declared:
        # Stopped at the declared size: the 40 MiB never all left the server (only what
        # the loopback socket buffers hold), where it used to be read to the 50 MiB cap.
        assert not sent.whole
        assert sent.bytes < served // 2
    assert not (isolated_home / ".agents" / "skills").exists()
