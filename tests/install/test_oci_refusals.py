"""OCI bad input and signatures: each refused naming the reference and the reason, with
nothing written (or the old state intact) and a non-zero exit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from install_support import skill_md, tree_files, write_skill
from oci_support import (
    Registry,
    blob_path,
    key_pair,
    misbehaving_registry,
    needs_registry,
    push_artifact,
    push_manifest,
    run_registry,
    targz,
)

from skillpack.cli._app import cli
from skillpack.install import approve_all, install
from skillpack.install._oci import OciClient, parse_reference
from skillpack.install._oci_publish import publish_oci
from skillpack.install._oci_resolve import OciOptions, _follow
from skillpack.install._oci_sign import payload_for, sign
from skillpack.install._values import Limits, Refused

AGENTSKILLS = "application/vnd.agentskills.skill.v1"
AGENTSKILLS_CONFIG = ("application/vnd.agentskills.skill.config.v1+json", b"{}")
AGENTSKILLS_LAYER = "application/vnd.agentskills.skill.content.v1.tar+gzip"
FLUX_CONFIG = ("application/vnd.cncf.flux.config.v1+json", b"{}")
FLUX_LAYER = "application/vnd.cncf.flux.content.v1.tar+gzip"


pytestmark = needs_registry


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path]]:
    folder = tmp_path_factory.mktemp("refusals-registry")
    with run_registry(folder) as running:
        yield running, folder


@pytest.fixture
def registry(served: tuple[Registry, Path]) -> Registry:
    return served[0]


@pytest.fixture
def storage(served: tuple[Registry, Path]) -> Path:
    """The registry's storage root (for tampering with what it serves)."""
    return served[1]


def refuse(ref: str, *extra: str) -> dict[str, Any]:
    """Run `install REF --yes --json`, expect exit 1, return the one refusal."""
    result = CliRunner().invoke(cli, ["install", ref, "--yes", "--json", *extra])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["installed"] == []
    (refusal,) = document["refused"]
    assert refusal["name"] == ref
    return dict(refusal)


def nothing_written(home: Path) -> bool:
    return (
        not (home / ".agents" / "skills").exists()
        and not (home / ".agents" / ".skillpack-lock.json").exists()
    )


def test_a_tampered_blob_and_a_tampered_manifest_are_refused_with_the_old_state_intact(
    registry: Registry, storage: Path, tmp_path: Path, isolated_home: Path
) -> None:
    source = tmp_path / "src"
    write_skill(source, "kept")
    repo = f"{registry.host}/tamper/skills"
    first = publish_oci(str(source), repo, tags=["1"]).artifacts[0]
    assert install(f"oci://{repo}/kept:1", approve=approve_all).ok
    before = tree_files(isolated_home / ".agents")
    write_skill(source, "kept", body="A second version.")
    second = publish_oci(str(source), repo, tags=["1"]).artifacts[0]
    manifest = json.loads(blob_path(storage, second.digest).read_bytes())
    layer = blob_path(storage, manifest["layers"][0]["digest"])
    original = layer.read_bytes()
    layer.write_bytes(bytes(b ^ 0xFF for b in original))
    try:
        refusal = refuse(f"oci://{repo}/kept:1")
        assert refusal["code"] == "digest-mismatch"
        assert f"{repo}/kept@{manifest['layers'][0]['digest']}" in refusal["message"]
        updated = CliRunner().invoke(cli, ["update", "--yes"])
        assert updated.exit_code == 1 and "digest-mismatch" in updated.output
        assert tree_files(isolated_home / ".agents") == before
    finally:
        layer.write_bytes(original)
    # The tag now points at a manifest whose stored bytes were altered ("retagged").
    target = blob_path(storage, second.digest)
    saved = target.read_bytes()
    target.write_bytes(blob_path(storage, first.digest).read_bytes())
    try:
        refusal = refuse(f"oci://{repo}/kept:1")
        assert refusal["code"] == "digest-mismatch"
        assert "the registry says the tag points at" in refusal["message"]
        pinned = refuse(f"oci://{repo}/kept@{second.digest}")
        assert pinned["code"] == "digest-mismatch"
        assert tree_files(isolated_home / ".agents") == before
    finally:
        target.write_bytes(saved)


@pytest.mark.parametrize(
    ("layers", "config", "artifact", "code", "words"),
    [
        (
            [("application/vnd.oci.image.layer.v1.tar+gzip", targz({"bin/sh": "x"}))],
            ("application/vnd.oci.image.config.v1+json", b'{"os":"linux"}'),
            None,
            "not-a-skill",
            "a container image, not a skill (artifactType (none), config "
            "application/vnd.oci.image.config.v1+json, layers "
            "application/vnd.oci.image.layer.v1.tar+gzip)",
        ),
        (
            [("application/x-unknown", b"?")],
            ("application/vnd.example.config+json", b"{}"),
            "application/vnd.example",
            "not-a-skill",
            "not a skill artifact (artifactType application/vnd.example",
        ),
        (
            [
                (AGENTSKILLS_LAYER, targz({"a/SKILL.md": skill_md("a")})),
                (AGENTSKILLS_LAYER, targz({"b/SKILL.md": skill_md("b")})),
            ],
            AGENTSKILLS_CONFIG,
            AGENTSKILLS,
            "layers-invalid",
            "with 2 skill layers",
        ),
        ([], AGENTSKILLS_CONFIG, AGENTSKILLS, "layers-invalid", "with 0 skill layers"),
        (
            [(FLUX_LAYER, targz({"ok/SKILL.md": skill_md("ok"), "ok/../../evil": "x"}))],
            FLUX_CONFIG,
            None,
            "unsafe-entry",
            "segment that is '.' or '..'",
        ),
        (
            [(FLUX_LAYER, targz({"ok/SKILL.md": skill_md("ok")}, symlinks={"ok/x": "SKILL.md"}))],
            FLUX_CONFIG,
            None,
            "unsafe-entry",
            "a link",
        ),
    ],
    ids=["container-image", "unknown", "two-layers", "zero-layers", "dotdot", "symlink"],
)
def test_artifacts_that_are_not_one_safe_skill_are_refused(
    registry: Registry,
    isolated_home: Path,
    layers: list[tuple[str, bytes]],
    config: tuple[str, bytes],
    artifact: str | None,
    code: str,
    words: str,
) -> None:
    repo = f"bad/{code}"
    push_artifact(registry, repo, "t", layers=layers, config=config, artifact_type=artifact)
    refusal = refuse(f"oci://{registry.host}/{repo}:t", "--all")
    assert refusal["code"] == code
    assert words in refusal["message"]
    assert f"{registry.host}/{repo}" in refusal["message"]
    assert nothing_written(isolated_home)


def test_a_layer_over_the_size_cap_is_not_downloaded(
    registry: Registry, isolated_home: Path
) -> None:
    layer = targz({"big/SKILL.md": skill_md("big"), "big/data.bin": "x" * 5000})
    push_artifact(
        registry,
        "bad/big",
        "t",
        layers=[(AGENTSKILLS_LAYER, layer)],
        config=AGENTSKILLS_CONFIG,
        artifact_type=AGENTSKILLS,
    )
    outcome = install(
        f"oci://{registry.host}/bad/big:t",
        approve=approve_all,
        limits=Limits(max_download_bytes=len(layer) - 1),
    )
    (refusal,) = outcome.refusals
    assert refusal.code == "too-large"
    assert f"over the {len(layer) - 1}-byte limit" in refusal.message
    assert nothing_written(isolated_home)


def test_indexes_that_nest_or_point_at_themselves_are_refused(
    registry: Registry, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaf = push_artifact(
        registry,
        "bad/nest",
        "leaf",
        layers=[(AGENTSKILLS_LAYER, targz({"n/SKILL.md": skill_md("n")}))],
        config=AGENTSKILLS_CONFIG,
        artifact_type=AGENTSKILLS,
    )
    inner: str = leaf
    for level in range(3):
        with registry.client() as client:
            size = len(client.get(f"/v2/bad/nest/manifests/{inner}").content)
        inner = push_manifest(
            registry,
            "bad/nest",
            f"level{level}",
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": [
                    {
                        "mediaType": "application/vnd.oci.image.index.v1+json"
                        if level
                        else "application/vnd.oci.image.manifest.v1+json",
                        "digest": inner,
                        "size": size,
                    }
                ],
            },
        )
    refusal = refuse(f"oci://{registry.host}/bad/nest:level2")
    assert refusal["code"] == "index-too-deep"  # nothing loops: it is only deep
    assert "nested 3 levels deep, past the 2 skillpack follows" in refusal["message"]
    assert "Publish the skill manifests in a flat index" in refusal["message"]
    assert nothing_written(isolated_home)
    # A registry that lies (an index whose entry is its own digest) cannot loop us.
    ref = parse_reference(f"{registry.host}/bad/nest:level0")
    with OciClient(ref.registry, limits=Limits()) as client:
        top = client.manifest(ref)
        with pytest.raises(Refused) as caught:
            _follow(client, ref, top.checked_digest, {top.checked_digest}, depth=1)
    assert caught.value.code == "index-cycle"
    assert "lists itself" in caught.value.message


@pytest.mark.parametrize(
    ("status", "code", "words"),
    [
        (404, "not-found", "does not exist"),
        (429, "rate-limited", "HTTP 429"),
        (0, "registry-unreachable", "did not answer in time"),
    ],
)
def test_registries_that_answer_404_429_or_never_are_refused(
    isolated_home: Path, status: int, code: str, words: str
) -> None:
    with misbehaving_registry(status) as host:
        ref = f"oci://{host}/some/skill:1"
        refusal = refuse(ref, "--timeout", "0.3")
    assert refusal["code"] == code
    assert words in refusal["message"] and f"{host}/some/skill:1" in refusal["message"]
    assert nothing_written(isolated_home)


def test_a_missing_tag_on_a_real_registry_is_refused(
    registry: Registry, isolated_home: Path
) -> None:
    refusal = refuse(f"oci://{registry.host}/nothing/here:9")
    assert refusal["code"] == "not-found"
    assert nothing_written(isolated_home)


# --- signatures -------------------------------------------------------------------------


def test_signed_publish_verifies_and_wrong_or_missing_signatures_are_refused(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    private, public, _key = key_pair(tmp_path, "cosign")
    _other_private, other_public, _other = key_pair(tmp_path, "other")
    source = tmp_path / "src"
    write_skill(source, "signed")
    repo = f"{registry.host}/sig/skills"
    pushed = CliRunner().invoke(
        cli, ["publish", str(source), "--oci", repo, "--tag", "1", "--sign-key", str(private)]
    )
    assert pushed.exit_code == 0, pushed.output
    assert "signed:" in pushed.output and ".sig" in pushed.output
    ref = f"oci://{repo}/signed:1"
    wrong = refuse(ref, "--verify-key", str(other_public))
    assert wrong["code"] == "signature-invalid"
    assert "does not verify" in wrong["message"]
    assert nothing_written(isolated_home)
    done = CliRunner().invoke(cli, ["install", ref, "--yes", "--verify-key", str(public)])
    assert done.exit_code == 0, done.output
    assert "signature: verified with --verify-key (tag sha256-" in done.output
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    assert lock["skills"]["signed"]["skillpack"]["oci"]["signature"].startswith("tag sha256-")
    # A new unsigned version under the same tag: update with the key keeps the old one.
    before = tree_files(isolated_home / ".agents")
    write_skill(source, "signed", body="Unsigned change.")
    publish_oci(str(source), repo, tags=["1"])
    updated = CliRunner().invoke(cli, ["update", "--yes", "--verify-key", str(public)])
    assert updated.exit_code == 1 and "signature-missing" in updated.output
    assert tree_files(isolated_home / ".agents") == before


@pytest.mark.parametrize("place", ["tag", "referrer"])
def test_a_signature_is_found_under_the_sig_tag_or_the_fallback_tag_alone(
    registry: Registry, tmp_path: Path, isolated_home: Path, place: str
) -> None:
    private, public, key = key_pair(tmp_path, "cosign")
    source = tmp_path / "src"
    write_skill(source, f"only-{place}")
    repo = f"{registry.host}/sig/{place}"
    pushed = publish_oci(str(source), repo, tags=["1"]).artifacts[0]
    ref = parse_reference(f"{repo}/only-{place}")
    with OciClient(ref.registry, limits=Limits()) as client:
        written = sign(client, ref, pushed.digest, key, places=(place,))
        assert len(written) == 1
        fallback = client.exists(ref, pushed.digest.replace(":", "-"))
        classic = client.exists(ref, pushed.digest.replace(":", "-") + ".sig")
    assert (fallback, classic) == (place == "referrer", place == "tag")
    outcome = install(
        f"oci://{repo}/only-{place}:1",
        approve=approve_all,
        oci=OciOptions(verify_key=public.read_bytes()),
    )
    assert outcome.ok, outcome.refusals


def test_a_valid_signature_of_another_digest_is_refused(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    import base64

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    _private, public, key = key_pair(tmp_path, "cosign")
    source = tmp_path / "src"
    write_skill(source, "victim")
    write_skill(source, "decoy")
    repo = f"{registry.host}/sig/moved"
    artifacts = {a.names[0]: a for a in publish_oci(str(source), repo, tags=["1"]).artifacts}
    victim = parse_reference(f"{repo}/victim")
    payload = payload_for(victim, artifacts["decoy"].digest)
    signature = base64.b64encode(key.sign(payload, ec.ECDSA(hashes.SHA256()))).decode()
    with OciClient(victim.registry, limits=Limits()) as client:
        payload_digest = client.push_blob(victim, payload)
        config_digest = client.push_blob(victim, b"{}")
    push_manifest(
        registry,
        "sig/moved/victim",
        artifacts["victim"].digest.replace(":", "-") + ".sig",
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": 2,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                    "digest": payload_digest,
                    "size": len(payload),
                    "annotations": {"dev.cosignproject.cosign/signature": signature},
                }
            ],
        },
    )
    refusal = refuse(f"oci://{repo}/victim:1", "--verify-key", str(public))
    assert refusal["code"] == "signature-invalid"
    assert f"for another digest, {artifacts['decoy'].digest}" in refusal["message"]
    assert nothing_written(isolated_home)
