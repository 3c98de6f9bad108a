"""The install-source interface: every built-in kind is registered, and a new kind is
one class plus one registration; install, the lock file, doctor and update then use it
with no other change."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpack.install import _kinds, approve_all, install, update
from skillpack.install._candidate import make_candidate
from skillpack.install._kinds import (
    SOURCE_KINDS,
    Context,
    SourceKind,
    kind_named,
    lock_types,
    parse_source,
)
from skillpack.install._source import Source
from skillpack.install._values import Offer, Origin, Payload, Request, Resolved

VERSIONS = {"1": "Say hello.", "2": "Say hello, then goodbye."}
"""What the made-up `memo:` source serves, by the version it is told to serve."""


def memo_skill(body: str) -> bytes:
    return f"---\nname: memo\ndescription: A memo. Use when testing.\n---\n{body}\n".encode()


class MemoKind:
    """`memo:VERSION`: a source that makes its one skill in memory."""

    name = "memo"
    lock_types = ("memo",)
    uses_fetcher = False

    def classify(self, text: str, *, cwd: str) -> Source | None:
        if not text.startswith("memo:"):
            return None
        return Source(kind="memo", text=text, location=text.removeprefix("memo:"))

    def resolve(self, source: Source, request: Request, context: Context) -> Offer:
        files = {"SKILL.md": memo_skill(VERSIONS[source.location])}
        origin = Origin(source_type="memo", source="memo", source_url="memo:")
        candidate = make_candidate(Payload(files=files), origin)
        return Offer(resolved=Resolved(candidates=(candidate,)), offered=(candidate.name,))

    def known_digest(self, origin: Origin) -> str:
        return ""

    def source_of(self, origin: Origin) -> Source:
        return Source(kind="memo", text="memo:2", location="2")  # the newest


def test_every_built_in_kind_is_registered_and_satisfies_the_interface() -> None:
    assert [kind.name for kind in SOURCE_KINDS] == ["oci", "folder", "git", "archive", "site"]
    assert all(isinstance(kind, SourceKind) for kind in SOURCE_KINDS)  # runtime-checkable
    assert lock_types() == {"oci", "local", "system", "github", "git", "archive", "well-known"}
    assert kind_named("site").uses_fetcher and not kind_named("git").uses_fetcher


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("oci://ghcr.io/org/skills/x:1", "oci"),
        ("owner/repo", "git"),
        ("https://github.com/o/r/releases/download/v1/x.tar.gz", "git"),
        ("https://example.com/x.tar.gz", "archive"),
        ("https://example.com/base", "site"),
    ],
)
def test_the_first_kind_that_claims_a_text_classifies_it(
    text: str, kind: str, tmp_path: Path
) -> None:
    assert parse_source(text, cwd=str(tmp_path)).kind == kind


def test_a_new_kind_is_one_class_and_one_registration(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_kinds, "SOURCE_KINDS", (MemoKind(), *SOURCE_KINDS))
    first = install("memo:1", approve=approve_all)
    assert first.ok, first.refusals
    installed = isolated_home / ".agents" / "skills" / "memo" / "SKILL.md"
    assert installed.read_bytes() == memo_skill(VERSIONS["1"])
    lock = (isolated_home / ".agents" / ".skillpack-lock.json").read_text()
    assert '"sourceType": "memo"' in lock
    updated = update(approve=approve_all)
    assert [(i.candidate.name, i.action) for i in updated.written] == [("memo", "update")]
    assert installed.read_bytes() == memo_skill(VERSIONS["2"])


def test_an_unknown_kind_or_lock_type_is_an_error_that_names_it() -> None:
    from skillpack._errors import SkillIOError, UsageError
    from skillpack.install._kinds import kind_recorded

    with pytest.raises(UsageError, match="'ftp'"):
        kind_named("ftp")
    with pytest.raises(SkillIOError, match="'svn'"):
        kind_recorded(Origin(source_type="svn", source="x"))
    with pytest.raises(SkillIOError, match="no OCI pin"):
        kind_named("oci").source_of(Origin(source_type="oci", source="r.example/a"))
