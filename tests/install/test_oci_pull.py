"""An OCI collection pulled for a server (`--from`): the tag's digest, every skill written
into the digest's folder whole, and the install's checks and signature policy kept:
a refused digest leaves no folder behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from install_support import write_skill
from oci_support import Registry, blob_path, key_pair, needs_registry, run_registry

from skillpack.install._oci import OciError
from skillpack.install._oci_publish import publish_oci
from skillpack.install._oci_pull import digest_folder, pull_digest, tag_digest
from skillpack.install._oci_resolve import OciOptions
from skillpack.install._values import Limits

pytestmark = needs_registry


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path]]:
    folder = tmp_path_factory.mktemp("pull-registry")
    with run_registry(folder) as running:
        yield running, folder


def test_a_tag_resolves_to_the_collection_digest_whose_skills_land_in_its_folder(
    served: tuple[Registry, Path], tmp_path: Path
) -> None:
    registry, _storage = served
    source = tmp_path / "src"
    write_skill(source, "alpha", files={"scripts/run.sh": "#!/bin/sh\necho alpha\n"})
    write_skill(source, "beta")
    report = publish_oci(str(source), f"{registry.host}/team/skills", tags=["stable"])
    collection = next(a for a in report.artifacts if a.kind == "collection")
    reference = f"oci://{registry.host}/team/skills:stable"
    options, limits = OciOptions(), Limits()
    digest = tag_digest(reference, options=options, limits=limits)
    assert digest == collection.digest
    assert tag_digest(f"{reference.split(':stable')[0]}@{digest}", options=options, limits=limits)
    target = digest_folder(tmp_path / "oci", digest)
    assert target.name == "sha256-" + digest.split(":")[1]
    names = pull_digest(reference, digest, target=target, options=options, limits=limits)
    assert names == ("alpha", "beta")
    assert (target / "alpha" / "SKILL.md").is_file() and (target / "beta" / "SKILL.md").is_file()
    assert (target / "alpha" / "scripts" / "run.sh").read_text() == "#!/bin/sh\necho alpha\n"
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temp left
    # A folder already complete is served as it is: nothing is fetched again.
    unreachable = "oci://127.0.0.1:9/team/skills:stable"
    assert pull_digest(unreachable, digest, target=target, options=options, limits=limits) == names


def test_a_tampered_layer_is_refused_and_leaves_no_folder(
    served: tuple[Registry, Path], tmp_path: Path
) -> None:
    registry, storage = served
    source = tmp_path / "src"
    write_skill(source, "gamma")
    write_skill(source, "delta")
    report = publish_oci(str(source), f"{registry.host}/bad/skills", tags=["1"])
    skill = next(a for a in report.artifacts if a.kind == "skill")
    reference = f"oci://{registry.host}/bad/skills:1"
    digest = tag_digest(reference, options=OciOptions(), limits=Limits())
    from skillpack.install._oci import OciClient, parse_reference

    with OciClient(registry.host, limits=Limits()) as client:
        manifest = client.manifest(parse_reference(f"{skill.repository}@{skill.digest}"))
    import json

    layer = json.loads(manifest.body)["layers"][0]["digest"]
    data = blob_path(storage, layer)
    original = data.read_bytes()
    data.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    try:
        target = digest_folder(tmp_path / "oci", digest)
        with pytest.raises(OciError) as caught:
            pull_digest(reference, digest, target=target, options=OciOptions(), limits=Limits())
    finally:
        data.write_bytes(original)
    assert caught.value.reason == "digest-mismatch"
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_a_key_to_verify_with_refuses_an_artifact_it_did_not_sign(
    served: tuple[Registry, Path], tmp_path: Path
) -> None:
    registry, _storage = served
    private, public, _key = key_pair(tmp_path, "cosign")
    _other_private, other_public, _other = key_pair(tmp_path, "other")
    source = tmp_path / "src"
    write_skill(source, "signed")
    publish_oci(
        str(source), f"{registry.host}/sig/skills", tags=["1"], sign_key=private.read_bytes()
    )
    reference = f"oci://{registry.host}/sig/skills/signed:1"
    limits = Limits()
    wrong = OciOptions(verify_key=other_public.read_bytes())
    digest = tag_digest(reference, options=wrong, limits=limits)
    target = digest_folder(tmp_path / "oci", digest)
    with pytest.raises(OciError) as caught:
        pull_digest(reference, digest, target=target, options=wrong, limits=limits)
    assert caught.value.reason == "signature-invalid" and reference.split("oci://")[1].split(":1")[
        0
    ] in str(caught.value)
    assert not target.exists()
    right = OciOptions(verify_key=public.read_bytes())
    assert pull_digest(reference, digest, target=target, options=right, limits=limits) == (
        "signed",
    )
