"""Installing from sites served by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import time
from pathlib import Path

import pytest
from install_support import serve, skill_md, tree_files, write_skill

from skillpack._errors import SkillIOError, UsageError
from skillpack._model import Root
from skillpack.discovery._discover import discover
from skillpack.install import Plan, approve_all, doctor, install, publish, update
from skillpack.install._digest import file_digests, sha256_digest, skill_digest
from skillpack.install._values import Limits
from skillpack.install._wellknown import SCHEMA_V2

FAST = Limits(timeout=2.0, retries=0)


def sources(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    write_skill(src, "hello-md", description="Say hello. Use when greeting someone.")
    write_skill(
        src,
        "toolbox",
        description="Run the toolbox. Use when you need the toolbox.",
        files={"references/REF.md": "# Reference\n", "scripts/run.sh": "#!/bin/sh\necho\n"},
    )
    (src / "toolbox" / "scripts" / "run.sh").chmod(0o755)
    return src


@pytest.fixture
def site(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    publish(str(sources(tmp_path)), str(root))
    return root


def user_skills(home: Path) -> Path:
    return home / ".agents" / "skills"


def well_known(root: Path) -> Path:
    return root / ".well-known" / "agent-skills"


def test_a_published_site_installs_verified_and_doctor_is_clean(
    site: Path, tmp_path: Path, isolated_home: Path
) -> None:
    with serve(site) as server:
        outcome = install(server.url, all_skills=True, approve=approve_all, limits=FAST)
    assert outcome.ok, outcome.refusals
    assert sorted(item.candidate.name for item in outcome.written) == ["hello-md", "toolbox"]
    installed = user_skills(isolated_home)
    assert tree_files(installed / "toolbox") == tree_files(tmp_path / "src" / "toolbox")
    assert (installed / "toolbox" / "scripts" / "run.sh").stat().st_mode & 0o111
    lock = json.loads((isolated_home / ".agents" / ".skillpack-lock.json").read_text())
    entry = lock["skills"]["toolbox"]
    assert entry["sourceType"] == "well-known" and entry["sourceUrl"] == server.url
    assert entry["wellKnownDigest"] == sha256_digest(
        (well_known(site) / "toolbox.tar.gz").read_bytes()
    )
    assert entry["skillpack"]["skillDigest"] == skill_digest(
        file_digests(tree_files(tmp_path / "src" / "toolbox"))
    )
    report = doctor()
    assert report.clean and [e.status for e in report.entries] == ["ok", "ok"]
    names = {
        s.name: s.scope
        for s in discover(cwd=str(tmp_path), include_system=False, use_cache=False).skills
    }
    assert names == {"hello-md": "user", "toolbox": "user"}


def test_the_approval_sees_each_skill_and_declining_writes_nothing(
    site: Path, isolated_home: Path
) -> None:
    seen: list[Plan] = []

    def decline(plan: Plan) -> bool:
        seen.append(plan)
        return False

    with serve(site) as server:
        outcome = install(server.url, skills=["toolbox"], approve=decline, limits=FAST)
    assert not outcome.approved and not outcome.ok
    [item] = seen[0].items
    assert item.action == "install"
    summary = item.candidate.summary
    assert summary.files == ("SKILL.md", "references/REF.md", "scripts/run.sh")
    assert summary.scripts == ("scripts/run.sh",)
    assert not user_skills(isolated_home).exists() or not any(user_skills(isolated_home).iterdir())
    assert not (isolated_home / ".agents" / ".skillpack-lock.json").exists()


def tampered_targz(original: bytes) -> bytes:
    """The same archive with one byte of SKILL.md changed."""
    raw = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(original), mode="r:gz") as source,
        tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as target,
    ):
        for member in source.getmembers():
            data = source.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "SKILL.md":
                data = data.replace(b"Do it.", b"Do it!")
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    return gzip.compress(raw.getvalue())


def test_a_tampered_archive_is_refused_and_the_installed_version_stays(
    site: Path, isolated_home: Path
) -> None:
    with serve(site) as server:
        assert install(server.url, all_skills=True, approve=approve_all, limits=FAST).ok
        before = tree_files(user_skills(isolated_home))
        archive = well_known(site) / "toolbox.tar.gz"
        # Make the served archive differ and the index claim something else: an update.
        archive.write_bytes(tampered_targz(archive.read_bytes()))
        index = json.loads((well_known(site) / "index.json").read_text())
        for entry in index["skills"]:
            if entry["name"] == "toolbox":
                entry["digest"] = "sha256:" + "0" * 64
        (well_known(site) / "index.json").write_text(json.dumps(index))
        outcome = update(approve=approve_all, limits=FAST)
    assert [(r.name, r.code) for r in outcome.refusals] == [("toolbox", "digest-mismatch")]
    assert "toolbox" in outcome.refusals[0].message
    assert tree_files(user_skills(isolated_home)) == before
    assert doctor().clean


def test_per_file_digests_catch_a_file_changed_inside_a_re_digested_archive(
    site: Path, isolated_home: Path
) -> None:
    archive = well_known(site) / "toolbox.tar.gz"
    archive.write_bytes(tampered_targz(archive.read_bytes()))
    index = json.loads((well_known(site) / "index.json").read_text())
    for entry in index["skills"]:
        if entry["name"] == "toolbox":
            entry["digest"] = sha256_digest(archive.read_bytes())  # the package digest matches
    (well_known(site) / "index.json").write_text(json.dumps(index))
    with serve(site) as server:
        outcome = install(server.url, all_skills=True, approve=approve_all, limits=FAST)
    assert [(r.name, r.code) for r in outcome.refusals] == [("toolbox", "file-digest-mismatch")]
    assert [i.candidate.name for i in outcome.written] == ["hello-md"]
    assert not (user_skills(isolated_home) / "toolbox").exists()


def cloudflare_site(root: Path, files: dict[str, bytes], *, digest: str | None = None) -> None:
    folder = well_known(root) / "demo"
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    digests = file_digests(files)
    index = {
        "version": "0.2.0",
        "skills": [
            {
                "name": "demo",
                "description": "Demo. Use when testing.",
                "digest": digest or skill_digest(digests),
                "files": [{"path": p, "digest": d} for p, d in digests.items()],
            }
        ],
    }
    (well_known(root) / "index.json").write_text(json.dumps(index))


def test_the_cloudflare_form_installs_file_by_file_and_checks_the_skill_digest(
    tmp_path: Path, isolated_home: Path
) -> None:
    files = {
        "SKILL.md": skill_md("demo", "Demo. Use when testing.").encode(),
        "scripts/run.sh": b"#!/bin/sh\n",
    }
    good, bad = tmp_path / "good", tmp_path / "bad"
    cloudflare_site(good, files)
    cloudflare_site(bad, files, digest="sha256:" + "1" * 64)
    with serve(bad) as server:
        outcome = install(server.url, approve=approve_all, limits=FAST)
    assert [(r.name, r.code) for r in outcome.refusals] == [("demo", "skill-digest-mismatch")]
    with serve(good) as server:
        outcome = install(server.url, approve=approve_all, limits=FAST)
    assert outcome.ok and tree_files(user_skills(isolated_home) / "demo") == files


def test_an_index_listing_a_path_outside_the_skill_is_refused_unfetched(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "site"
    write_skill(well_known(root), "demo")
    (well_known(root) / "index.json").write_text(
        json.dumps(
            {
                "skills": [
                    {"name": "demo", "description": "Demo.", "files": ["SKILL.md", "../index.json"]}
                ]
            }
        )
    )
    with serve(root) as server:
        outcome = install(server.url, approve=approve_all, limits=FAST)
        requests = server.requests()
    assert [(r.name, r.code) for r in outcome.refusals] == [("demo", "unsafe-entry")]
    assert "../index.json" in outcome.refusals[0].message
    assert not any("demo" in line for line in requests)
    assert not user_skills(isolated_home).exists() or not any(user_skills(isolated_home).iterdir())


def test_a_404_midway_refuses_that_skill_and_installs_the_others(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "site"
    write_skill(well_known(root), "good")
    write_skill(well_known(root), "broken")
    (well_known(root) / "index.json").write_text(
        json.dumps(
            {
                "skills": [
                    {"name": "good", "description": "Good.", "files": ["SKILL.md"]},
                    {
                        "name": "broken",
                        "description": "Broken.",
                        "files": ["SKILL.md", "missing.md"],
                    },
                ]
            }
        )
    )
    with serve(root) as server:
        outcome = install(server.url, all_skills=True, approve=approve_all, limits=FAST)
    assert [(r.name, r.code) for r in outcome.refusals] == [("broken", "fetch-failed")]
    assert "missing.md" in outcome.refusals[0].message and "404" in outcome.refusals[0].message
    assert [i.candidate.name for i in outcome.written] == ["good"]
    assert not (user_skills(isolated_home) / "broken").exists()
    assert any("cannot be verified" in w for w in outcome.warnings)


def test_a_server_that_never_answers_fails_within_the_timeout(
    site: Path, isolated_home: Path
) -> None:
    with serve(site) as server:
        started = time.monotonic()
        with pytest.raises(SkillIOError, match="did not answer in time"):
            install(
                server.url + "/hang",
                all_skills=True,
                approve=approve_all,
                limits=Limits(timeout=0.5, retries=1),
            )
        assert time.monotonic() - started < 10
    assert not user_skills(isolated_home).exists()


def test_an_artifact_that_never_arrives_refuses_that_skill_only(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "site"
    with serve(root) as server:
        for name in ("quick", "stuck"):
            write_skill(well_known(root), name)
        index = {
            "$schema": SCHEMA_V2,
            "skills": [
                {
                    "name": name,
                    "type": "skill-md",
                    "description": "D.",
                    "url": url,
                    "digest": sha256_digest((well_known(root) / name / "SKILL.md").read_bytes()),
                }
                for name, url in (
                    ("quick", "quick/SKILL.md"),
                    ("stuck", f"{server.url}/hang/stuck/SKILL.md"),
                )
            ],
        }
        (well_known(root) / "index.json").write_text(json.dumps(index))
        outcome = install(
            server.url, all_skills=True, approve=approve_all, limits=Limits(timeout=0.5, retries=0)
        )
    assert [(r.name, r.code) for r in outcome.refusals] == [("stuck", "fetch-failed")]
    assert "did not answer in time" in outcome.refusals[0].message
    assert [i.candidate.name for i in outcome.written] == ["quick"]
    assert not (user_skills(isolated_home) / "stuck").exists()


def test_a_site_without_an_index_names_the_urls_it_tried(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with serve(tmp_path / "empty") as server, pytest.raises(SkillIOError) as caught:
        install(server.url + "/base", all_skills=True, approve=approve_all, limits=FAST)
    message = str(caught.value)
    assert "/base/.well-known/agent-skills/index.json (404)" in message
    assert "/base/.well-known/skills/index.json (404)" in message


def test_plain_http_is_refused_except_on_loopback() -> None:
    with pytest.raises(UsageError, match="only https"):
        install("http://example.com", all_skills=True, approve=approve_all, limits=FAST)


def test_a_skill_failing_strict_validation_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "site"
    folder = well_known(root) / "demo"
    folder.mkdir(parents=True)
    body = b"---\nname: other-name\ndescription: Demo.\n---\nbody\n"
    (folder / "SKILL.md").write_bytes(body)
    (well_known(root) / "index.json").write_text(
        json.dumps(
            {
                "$schema": SCHEMA_V2,
                "skills": [
                    {
                        "name": "demo",
                        "type": "skill-md",
                        "description": "Demo.",
                        "url": "demo/SKILL.md",
                        "digest": sha256_digest(body),
                    }
                ],
            }
        )
    )
    with serve(root) as server:
        outcome = install(server.url, approve=approve_all, limits=FAST)
    [refusal] = outcome.refusals
    assert (refusal.name, refusal.code) == ("demo", "skill-invalid")
    assert "name-mismatch" in refusal.message


def test_several_skills_need_a_choice_and_an_unknown_name_is_refused(site: Path) -> None:
    with serve(site) as server:
        with pytest.raises(UsageError, match="offers 2 skills: hello-md, toolbox"):
            install(server.url, approve=approve_all, limits=FAST)
        outcome = install(server.url, skills=["nope"], approve=approve_all, limits=FAST)
        requests = server.requests()
    assert [(r.name, r.code) for r in outcome.refusals] == [("nope", "not-found")]
    assert "hello-md, toolbox" in outcome.refusals[0].message
    assert not any(line.endswith(".tar.gz") for line in requests)


def test_an_update_reuses_the_index_by_etag_and_skips_unchanged_artifacts(
    site: Path, isolated_home: Path
) -> None:
    with serve(site) as server:
        assert install(server.url, all_skills=True, approve=approve_all, limits=FAST).ok
        first = len(server.requests())
        outcome = update(approve=approve_all, limits=FAST)
        later = server.requests()[first:]
    assert outcome.ok and outcome.plan.unchanged == ("hello-md", "toolbox")
    assert later == ["304 /.well-known/agent-skills/index.json"]


def test_an_update_shows_changed_files_and_a_local_edit_is_never_overwritten(
    site: Path, tmp_path: Path, isolated_home: Path
) -> None:
    seen: list[Plan] = []

    def approve(plan: Plan) -> bool:
        seen.append(plan)
        return True

    with serve(site) as server:
        assert install(server.url, all_skills=True, approve=approve_all, limits=FAST).ok
        src = tmp_path / "src"
        (src / "toolbox" / "references" / "REF.md").write_text("# Reference v2\n")
        (src / "toolbox" / "references" / "NEW.md").write_text("new\n")
        (src / "hello-md" / "SKILL.md").write_text(skill_md("hello-md", "Say hello v2."))
        publish(str(src), str(site))
        edited = user_skills(isolated_home) / "hello-md" / "SKILL.md"
        edited.write_text(edited.read_text() + "my note\n")
        outcome = update(approve=approve, limits=FAST)
    [item] = seen[0].items
    assert (item.candidate.name, item.action) == ("toolbox", "update")
    assert item.changes is not None
    assert (item.changes.added, item.changes.changed, item.changes.removed) == (
        ("references/NEW.md",),
        ("references/REF.md",),
        (),
    )
    assert [(r.name, r.code) for r in outcome.refusals] == [("hello-md", "locally-modified")]
    assert edited.read_text().endswith("my note\n")
    assert (user_skills(isolated_home) / "toolbox" / "references" / "NEW.md").exists()


def test_a_name_installed_from_another_source_or_by_hand_is_a_collision(
    site: Path, tmp_path: Path, isolated_home: Path
) -> None:
    other = tmp_path / "other"
    write_skill(other, "toolbox", description="Another toolbox.")
    write_skill(other, "handmade")
    by_hand = user_skills(isolated_home) / "handmade"
    by_hand.mkdir(parents=True)
    (by_hand / "SKILL.md").write_text(skill_md("handmade"))
    with serve(site) as server:
        assert install(server.url, skills=["toolbox"], approve=approve_all, limits=FAST).ok
    outcome = install(str(other), all_skills=True, approve=approve_all)
    codes = sorted((r.name, r.code) for r in outcome.refusals)
    assert codes == [("handmade", "name-collision"), ("toolbox", "name-collision")]
    toolbox = next(r for r in outcome.refusals if r.name == "toolbox")
    assert "skillpack remove toolbox" in toolbox.message
    kept = (user_skills(isolated_home) / "toolbox" / "SKILL.md").read_text()
    assert "Another toolbox" not in kept


def test_project_installs_write_skills_lock_json_in_the_project_root(
    site: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    with serve(site) as server:
        outcome = install(
            server.url,
            skills=["hello-md"],
            scope="project",
            cwd=str(project / "sub"),
            approve=approve_all,
            limits=FAST,
        )
    assert outcome.ok
    assert (project / ".agents" / "skills" / "hello-md" / "SKILL.md").is_file()
    lock = json.loads((project / "skills-lock.json").read_text())
    assert list(lock) == ["version", "skills"] and lock["version"] == 1
    repo = discover(
        roots=[Root(path=str(project / ".agents" / "skills"), scope="repo")], use_cache=False
    )
    assert [s.name for s in repo.skills] == ["hello-md"]
    assert doctor(scope="project", cwd=str(project)).clean


def test_claude_code_gets_a_link_when_its_folder_exists(site: Path, isolated_home: Path) -> None:
    (isolated_home / ".claude").mkdir()
    with serve(site) as server:
        assert install(server.url, skills=["hello-md"], approve=approve_all, limits=FAST).ok
    link = isolated_home / ".claude" / "skills" / "hello-md"
    assert link.is_symlink() and (link / "SKILL.md").is_file()
    from skillpack.install import remove

    assert remove(["hello-md"]).ok
    assert not link.exists() and not link.is_symlink()


def test_project_scope_refuses_when_the_project_root_is_the_home_folder(
    isolated_home: Path,
) -> None:
    with pytest.raises(UsageError, match="needs a project"):
        install("./x", scope="project", cwd=str(isolated_home), approve=approve_all)


def test_the_progress_hook_sees_every_download_grow_and_end(site: Path) -> None:
    calls: list[tuple[str, int, int | None]] = []
    with serve(site) as server:
        outcome = install(
            server.url,
            skills=["toolbox"],
            approve=approve_all,
            limits=FAST,
            progress=lambda url, done, total: calls.append((url, done, total)),
        )
    assert outcome.ok
    archive = f"{server.url}/.well-known/agent-skills/toolbox.tar.gz"
    size = (well_known(site) / "toolbox.tar.gz").stat().st_size
    assert (archive, size, size) in calls and (archive, -1, None) in calls


def test_a_far_server_is_read_by_worker_threads_with_the_same_outcome(
    site: Path, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillpack.install import _resolve

    monkeypatch.setattr(_resolve, "is_loopback", lambda host: False)
    with serve(site) as server:
        outcome = install(server.url, all_skills=True, approve=approve_all, limits=FAST)
    assert outcome.ok
    assert [i.candidate.name for i in outcome.written] == ["hello-md", "toolbox"]
    assert tree_files(user_skills(isolated_home) / "toolbox") == tree_files(
        tmp_path / "src" / "toolbox"
    )


def test_server_errors_and_insecure_redirects_refuse_that_skill(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "site"
    with serve(root) as server:
        for name in ("good", "broken", "bounced"):
            write_skill(well_known(root), name)
        urls = {
            "good": "good/SKILL.md",
            "broken": f"{server.url}/status/503/broken/SKILL.md",
            "bounced": f"{server.url}/redirect-to/http://example.com/bounced/SKILL.md",
        }
        index = {
            "$schema": SCHEMA_V2,
            "skills": [
                {
                    "name": name,
                    "type": "skill-md",
                    "description": "D.",
                    "url": url,
                    "digest": sha256_digest((well_known(root) / name / "SKILL.md").read_bytes()),
                }
                for name, url in urls.items()
            ],
        }
        (well_known(root) / "index.json").write_text(json.dumps(index))
        outcome = install(
            server.url, all_skills=True, approve=approve_all, limits=Limits(timeout=2.0, retries=1)
        )
        requests = server.requests()
    refused = {r.name: r for r in outcome.refusals}
    assert {name: r.code for name, r in refused.items()} == {
        "broken": "fetch-failed",
        "bounced": "fetch-failed",
    }
    assert "HTTP 503" in refused["broken"].message and "tried 2 times" in refused["broken"].message
    assert "only https" in refused["bounced"].message
    assert requests.count("503 /status/503/broken/SKILL.md") == 2
    assert [i.candidate.name for i in outcome.written] == ["good"]
