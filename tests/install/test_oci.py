"""Skills from an OCI registry: a real CNCF distribution server on 127.0.0.1, plain and
with htpasswd auth over TLS; publish, install, lock, doctor, update, the other layouts."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from install_support import skill_md, tree_files, write_skill
from oci_support import (
    PASSWORD,
    SKOPEO,
    Registry,
    digest,
    docker_config,
    needs_registry,
    needs_skopeo,
    push_artifact,
    push_manifest,
    run_registry,
    targz,
)

from skillpack.cli._app import cli
from skillpack.install import approve_all, install, update
from skillpack.install._oci_publish import publish_oci

pytestmark = needs_registry

MEDIA_TYPE = r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
DESCRIPTOR = {
    "type": "object",
    "required": ["mediaType", "digest", "size"],
    "properties": {
        "mediaType": {"type": "string", "pattern": MEDIA_TYPE},
        "digest": {"type": "string", "pattern": r"^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$"},
        "size": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "artifactType": {"type": "string", "pattern": MEDIA_TYPE},
        "urls": {"type": "array", "items": {"type": "string", "format": "uri"}},
    },
}
IMAGE_MANIFEST_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["schemaVersion", "config", "layers"],
    "properties": {
        "schemaVersion": {"type": "integer", "minimum": 2, "maximum": 2},
        "mediaType": {"const": "application/vnd.oci.image.manifest.v1+json"},
        "artifactType": {"type": "string", "pattern": MEDIA_TYPE},
        "config": DESCRIPTOR,
        "layers": {"type": "array", "items": DESCRIPTOR},
        "subject": DESCRIPTOR,
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}
"""The image-spec's image-manifest schema (its rules, written for jsonschema)."""


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with run_registry(tmp_path_factory.mktemp("registry")) as running:
        yield running


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def lock(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / ".agents" / ".skillpack-lock.json").read_text())
    return data


def skills_dir(home: Path) -> Path:
    return home / ".agents" / "skills"


def fetch_manifest(registry: Registry, repo: str, ref: str) -> bytes:
    with registry.client() as client:
        answer = client.get(
            f"/v2/{repo}/manifests/{ref}",
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert answer.status_code == 200, answer.text
        return answer.content


def test_publish_is_reproducible_outside_clients_read_it_and_it_installs_pinned(
    registry: Registry, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jsonschema

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    source = tmp_path / "src"
    write_skill(source, "alpha", files={"scripts/run.sh": "echo hi\n", "refs/a.md": "a"})
    (source / "alpha" / "scripts" / "run.sh").chmod(0o755)
    repo = f"{registry.host}/team/skills"
    first = run("publish", str(source), "--oci", repo, "--tag", "1.0", "--tag", "stable")
    second = run("publish", str(source), "--oci", repo, "--tag", "1.0", "--json")
    assert first.exit_code == 0, first.output
    pushed = json.loads(second.output)["artifacts"][0]
    assert first.output.splitlines() == [
        f"{repo}/alpha:1.0@{pushed['digest']}",
        f"{repo}/alpha:stable@{pushed['digest']}",
    ]
    raw = fetch_manifest(registry, "team/skills/alpha", "1.0")
    assert digest(raw) == pushed["digest"]
    manifest = json.loads(raw)
    jsonschema.validate(manifest, IMAGE_MANIFEST_SCHEMA)
    assert manifest["artifactType"] == "application/vnd.agentskills.skill.v1"
    notes = manifest["annotations"]
    assert notes["io.agentskills.skill.name"] == notes["org.opencontainers.image.title"] == "alpha"
    assert notes["org.opencontainers.image.created"] == "2023-11-14T22:13:20Z"
    if SKOPEO is not None:
        inspected = subprocess.run(
            [SKOPEO, "inspect", "--raw", "--tls-verify=false", f"docker://{repo}/alpha:1.0"],
            capture_output=True,
            check=True,
        )
        assert inspected.stdout == raw
        subprocess.run(
            [
                SKOPEO,
                "copy",
                "--src-tls-verify=false",
                f"docker://{repo}/alpha:1.0",
                f"oci:{tmp_path / 'layout'}:copy",
            ],
            capture_output=True,
            check=True,
        )
        index = json.loads((tmp_path / "layout" / "index.json").read_text())
        assert index["manifests"][0]["digest"] == pushed["digest"]

    outcome = install(f"oci://{repo}/alpha:1.0", approve=approve_all)
    assert outcome.ok, outcome.refusals
    installed = skills_dir(isolated_home) / "alpha"
    assert tree_files(installed) == tree_files(source / "alpha")
    assert (installed / "scripts" / "run.sh").stat().st_mode & 0o111
    entry = lock(isolated_home)["skills"]["alpha"]
    assert entry["sourceType"] == "oci"
    assert entry["skillpack"]["oci"] == {
        "reference": f"oci://{repo}/alpha:1.0",
        "registry": registry.host,
        "repository": "team/skills/alpha",
        "tag": "1.0",
        "manifestDigest": pushed["digest"],
        "format": "agentskills",
        "subPath": "alpha",
    }
    doctor = run("doctor", "--json")
    assert doctor.exit_code == 0
    (checked,) = json.loads(doctor.output)["skills"]
    assert checked["source"] == f"oci://{repo}/alpha:1.0@{pushed['digest']}"
    import shutil

    shutil.rmtree(installed)
    missing = run("doctor", "--json")
    assert missing.exit_code == 1
    (gone,) = json.loads(missing.output)["skills"]
    pinned = f"oci://{repo}/alpha@{pushed['digest']}"
    assert gone["status"] == "missing" and f"skillpack install {pinned}" in gone["detail"]
    again = run("install", pinned, "--yes")
    assert again.exit_code == 0, again.output
    assert tree_files(installed) == tree_files(source / "alpha")


def test_update_re_resolves_the_tag_and_shows_the_change_by_digest(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    source = tmp_path / "src"
    write_skill(source, "moving")
    repo = f"{registry.host}/update/skills"
    old = publish_oci(str(source), repo, tags=["v"]).artifacts[0].digest
    assert install(f"oci://{repo}/moving:v", approve=approve_all).ok
    same = update(approve=approve_all)
    assert (same.ok, same.plan.unchanged, same.written) == (True, ("moving",), ())
    write_skill(source, "moving", body="Now different.")
    new = publish_oci(str(source), repo, tags=["v"]).artifacts[0].digest
    assert new != old
    shown = run("update", "--yes")
    assert shown.exit_code == 0, shown.output
    assert f"oci://{repo}/moving:v@{old} -> oci://{repo}/moving:v@{new}" in shown.output
    assert lock(isolated_home)["skills"]["moving"]["skillpack"]["oci"]["manifestDigest"] == new
    assert "Now different." in (skills_dir(isolated_home) / "moving" / "SKILL.md").read_text()
    pinned = install(f"oci://{repo}/moving@{old}", approve=approve_all)
    assert pinned.ok and pinned.written[0].candidate.origin.oci.digest == old  # type: ignore[union-attr]


def test_a_flux_bundle_offers_its_skills_like_a_repository(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    source = tmp_path / "src"
    for name in ("one", "two", "three"):
        write_skill(source, name)
    repo = f"{registry.host}/flux/bundle"
    pushed = publish_oci(str(source), repo, format="flux", tags=["1"]).artifacts[0]
    manifest = json.loads(fetch_manifest(registry, "flux/bundle", "1"))
    assert "artifactType" not in manifest
    assert manifest["config"]["mediaType"] == "application/vnd.cncf.flux.config.v1+json"
    assert pushed.names == ("one", "three", "two")
    choose = run("install", f"oci://{repo}:1", "--yes")
    assert choose.exit_code != 0 and "offers 3 skills: one, three, two" in choose.output
    taken = install(f"oci://{repo}:1", skills=["two"], approve=approve_all)
    assert [i.candidate.name for i in taken.written] == ["two"]
    assert lock(isolated_home)["skills"]["two"]["skillpack"]["oci"]["subPath"] == "two"
    assert lock(isolated_home)["skills"]["two"]["skillPath"] == "two/SKILL.md"
    every = install(f"oci://{repo}:1", all_skills=True, approve=approve_all)
    assert sorted(i.candidate.name for i in every.written) == ["one", "three"]


@needs_skopeo
def test_toolhive_ramalama_and_flux_artifacts_pushed_by_skopeo_install(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    assert SKOPEO is not None
    layout = tmp_path / "layout"
    blobs = layout / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion":"1.0.0"}')

    def blob(data: bytes, media_type: str, **extra: Any) -> dict[str, Any]:
        (blobs / digest(data).split(":")[1]).write_bytes(data)
        return {"mediaType": media_type, "digest": digest(data), "size": len(data), **extra}

    skill_text = skill_md("docs-helper")
    labels = {
        "dev.toolhive.skills.name": "docs-helper",
        "dev.toolhive.skills.files": '["SKILL.md","guide.md"]',
    }
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Labels": labels}})
    layer = targz({"SKILL.md": skill_text, "guide.md": "guide"})
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": "dev.toolhive.skills.v1",
            "config": blob(config.encode(), "application/vnd.oci.image.config.v1+json"),
            "layers": [blob(layer, "application/vnd.oci.image.layer.v1.tar+gzip")],
        }
    ).encode()
    platform = {"architecture": "amd64", "os": "linux"}
    index = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "artifactType": "dev.toolhive.skills.v1",
            "manifests": [
                blob(manifest, "application/vnd.oci.image.manifest.v1+json", platform=platform)
            ],
        }
    ).encode()
    ramalama_layer = targz({"rama/SKILL.md": skill_md("rama"), "rama/notes.md": "n"})
    ramalama = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": "application/vnd.cncf.skill.manifest.v1+json",
            "config": blob(b'{"name":"rama"}', "application/vnd.cncf.skill.config.v1+json"),
            "layers": [blob(ramalama_layer, "application/vnd.cncf.skill.bundle.v1.tar+gzip")],
        }
    ).encode()
    flux_layer = targz(
        {"f-one/SKILL.md": skill_md("f-one"), "f-two/SKILL.md": skill_md("f-two"), "README": "r"}
    )
    flux = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": blob(b"{}", "application/vnd.cncf.flux.config.v1+json"),
            "layers": [blob(flux_layer, "application/vnd.cncf.flux.content.v1.tar+gzip")],
            "annotations": {"org.opencontainers.image.created": "2026-01-01T00:00:00Z"},
        }
    ).encode()
    refs = [
        blob(index, "application/vnd.oci.image.index.v1+json"),
        blob(ramalama, "application/vnd.oci.image.manifest.v1+json"),
        blob(flux, "application/vnd.oci.image.manifest.v1+json"),
    ]
    for ref, name in zip(refs, ("thive", "rama", "flux"), strict=True):
        ref["annotations"] = {"org.opencontainers.image.ref.name": name}
    (layout / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": refs}))
    for tag, repo in (
        ("thive", "dockyard/skills/docs-helper:0.1"),
        ("rama", "ramalama/rama:1"),
        ("flux", "fluxcd/skills:2"),
    ):
        subprocess.run(
            [
                SKOPEO,
                "copy",
                "--all",
                "--preserve-digests",
                "--dest-tls-verify=false",
                f"oci:{layout}:{tag}",
                f"docker://{registry.host}/{repo}",
            ],
            capture_output=True,
            check=True,
        )
    toolhive = install(
        f"oci://{registry.host}/dockyard/skills/docs-helper:0.1", approve=approve_all
    )
    assert toolhive.ok, toolhive.refusals
    assert tree_files(skills_dir(isolated_home) / "docs-helper") == {
        "SKILL.md": skill_text.encode(),
        "guide.md": b"guide",
    }
    entry = lock(isolated_home)["skills"]["docs-helper"]["skillpack"]["oci"]
    assert (entry["format"], entry["manifestDigest"]) == ("toolhive", digest(index))
    rama = install(f"oci://{registry.host}/ramalama/rama:1", approve=approve_all)
    assert rama.ok, rama.refusals
    assert lock(isolated_home)["skills"]["rama"]["skillpack"]["oci"]["format"] == "ramalama"
    bundle = install(f"oci://{registry.host}/fluxcd/skills:2", all_skills=True, approve=approve_all)
    assert sorted(i.candidate.name for i in bundle.written) == ["f-one", "f-two"]
    assert lock(isolated_home)["skills"]["f-two"]["skillpack"]["oci"]["format"] == "flux"


def test_an_agentskills_collection_index_installs_each_skill(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    entries = []
    for name in ("left", "right"):
        manifest_digest = push_artifact(
            registry,
            "coll/skills",
            f"{name}-1",
            artifact_type="application/vnd.agentskills.skill.v1",
            config=("application/vnd.agentskills.skill.config.v1+json", b'{"schemaVersion":"1"}'),
            layers=[
                (
                    "application/vnd.agentskills.skill.content.v1.tar+gzip",
                    targz({f"{name}/SKILL.md": skill_md(name)}),
                )
            ],
        )
        raw = fetch_manifest(registry, "coll/skills", manifest_digest)
        entries.append(
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": manifest_digest,
                "size": len(raw),
                "annotations": {"io.agentskills.skill.name": name},
            }
        )
    push_manifest(
        registry,
        "coll/skills",
        "all",
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "artifactType": "application/vnd.agentskills.collection.v1",
            "manifests": entries,
        },
    )
    outcome = install(
        f"oci://{registry.host}/coll/skills:all", skills=["right"], approve=approve_all
    )
    assert [i.candidate.name for i in outcome.written] == ["right"]
    assert not (skills_dir(isolated_home) / "left").exists()


def test_htpasswd_over_tls_with_docker_config_credentials(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    write_skill(source, "secret-skill")
    with run_registry(tmp_path / "secure", secure=True) as secure:
        assert secure.ca is not None
        monkeypatch.setenv("SSL_CERT_FILE", str(secure.ca))
        monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "no-login"))
        ref = f"oci://{secure.host}/private/skills/secret-skill:1"
        refused = run("install", ref, "--yes", "--json")
        assert refused.exit_code == 1
        (problem,) = json.loads(refused.output)["refused"]
        assert problem["code"] == "auth-failed"
        assert f"{secure.host}/private/skills/secret-skill:1" in problem["message"]
        assert not skills_dir(isolated_home).exists()

        monkeypatch.setenv("DOCKER_CONFIG", str(docker_config(tmp_path / "login", secure)))
        pushed = run("publish", str(source), "--oci", f"{secure.host}/private/skills", "--tag", "1")
        assert pushed.exit_code == 0, pushed.output
        done = run("install", ref, "--yes")
        assert done.exit_code == 0, done.output
        assert PASSWORD not in pushed.output + done.output
        text = (isolated_home / ".agents" / ".skillpack-lock.json").read_text()
        assert PASSWORD not in text and "tester" not in text
        assert (skills_dir(isolated_home) / "secret-skill" / "SKILL.md").is_file()


def test_publishing_several_skills_also_writes_a_collection_that_installs_them_all(
    registry: Registry, tmp_path: Path, isolated_home: Path
) -> None:
    source = tmp_path / "src"
    for name in ("red", "green"):
        write_skill(source, name)
    repo = f"{registry.host}/palette/skills"
    report = publish_oci(str(source), repo, tags=["2"])
    assert [(a.kind, a.names) for a in report.artifacts] == [
        ("skill", ("green",)),
        ("skill", ("red",)),
        ("collection", ("green", "red")),
    ]
    with registry.client() as client:
        index = client.get(
            "/v2/palette/skills/manifests/2",
            headers={"Accept": "application/vnd.oci.image.index.v1+json"},
        ).json()
    assert index["artifactType"] == "application/vnd.agentskills.collection.v1"
    assert [m["digest"] for m in index["manifests"]] == [a.digest for a in report.artifacts[:2]]
    outcome = install(f"oci://{repo}:2", all_skills=True, approve=approve_all)
    assert sorted(i.candidate.name for i in outcome.written) == ["green", "red"]
    entry = lock(isolated_home)["skills"]["red"]["skillpack"]["oci"]
    assert entry["manifestDigest"] == report.artifacts[2].digest
