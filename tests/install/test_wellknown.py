"""Index documents in the three forms: 0.2.0 `$schema`, legacy, and the Cloudflare draft."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillpack.install._wellknown import SCHEMA_V2, IndexUnusable, index_urls, parse_index

INDEX = "https://example.com/.well-known/agent-skills/index.json"
DIGEST = "sha256:" + "a" * 64


def parse(document: Any) -> Any:
    return parse_index(json.dumps(document).encode(), index_url=INDEX)


def v2(**overrides: Any) -> dict[str, Any]:
    entry = {
        "name": "pdf",
        "type": "archive",
        "description": "PDFs.",
        "url": "pdf.tar.gz",
        "digest": DIGEST,
    }
    entry.update(overrides)
    return entry


def test_index_urls_follow_the_skills_cli_probing_order() -> None:
    assert index_urls("https://example.com") == (
        "https://example.com/.well-known/agent-skills/index.json",
        "https://example.com/.well-known/skills/index.json",
    )
    assert index_urls("https://example.com/team/") == (
        "https://example.com/team/.well-known/agent-skills/index.json",
        "https://example.com/team/.well-known/skills/index.json",
    )


def test_a_schema_entry_resolves_its_url_against_the_index_url() -> None:
    parsed = parse(
        {
            "$schema": SCHEMA_V2,
            "skills": [
                v2(),
                v2(name="cdn", url="https://cdn.example.net/cdn.zip"),
                v2(name="md", type="skill-md", url="/other/md/SKILL.md"),
            ],
        }
    )
    assert parsed.form == "v2" and parsed.warnings == ()
    urls = {e.name: (e.kind, e.url) for e in parsed.entries}
    assert urls == {
        "pdf": ("archive", "https://example.com/.well-known/agent-skills/pdf.tar.gz"),
        "cdn": ("archive", "https://cdn.example.net/cdn.zip"),
        "md": ("skill-md", "https://example.com/other/md/SKILL.md"),
    }


def test_publish_extras_give_per_file_digests_and_a_skill_digest() -> None:
    entry = v2(files=[{"path": "SKILL.md", "digest": DIGEST}], skillDigest=DIGEST)
    [parsed] = parse({"$schema": SCHEMA_V2, "skills": [entry]}).entries
    assert [(f.path, f.digest) for f in parsed.files] == [("SKILL.md", DIGEST)]
    assert parsed.skill_digest == DIGEST


BAD_ENTRIES = [
    (v2(name="Bad_Name"), "name"),
    (v2(name="a--b"), "name"),
    (v2(description=""), "description"),
    (v2(description="x" * 1025), "over 1024"),
    (v2(type="plugin"), "type"),
    (v2(url=""), "url"),
    (v2(digest="sha256:" + "A" * 64), "digest"),
    (v2(digest="md5:abc"), "digest"),
    ("not an object", "not an object"),
]


@pytest.mark.parametrize(("entry", "reason"), BAD_ENTRIES, ids=[b[1] for b in BAD_ENTRIES])
def test_an_invalid_entry_is_skipped_with_a_warning_and_the_rest_load(
    entry: Any, reason: str
) -> None:
    parsed = parse({"$schema": SCHEMA_V2, "skills": [entry, v2(name="good")]})
    assert [e.name for e in parsed.entries] == ["good"]
    [warning] = parsed.warnings
    assert reason in warning


def test_a_duplicate_name_keeps_the_first_entry() -> None:
    parsed = parse({"$schema": SCHEMA_V2, "skills": [v2(), v2(url="other.tar.gz")]})
    assert [e.url for e in parsed.entries] == [
        "https://example.com/.well-known/agent-skills/pdf.tar.gz"
    ]
    assert "twice" in parsed.warnings[0]


def test_the_legacy_form_fetches_files_from_the_skill_folder_and_warns() -> None:
    parsed = parse(
        {
            "skills": [
                {"name": "pdf", "description": "PDFs.", "files": ["SKILL.md", "scripts/fill.py"]}
            ]
        }
    )
    [entry] = parsed.entries
    assert (parsed.form, entry.kind, entry.digest) == ("legacy", "files", None)
    assert [f.url for f in entry.files] == [
        "https://example.com/.well-known/agent-skills/pdf/SKILL.md",
        "https://example.com/.well-known/agent-skills/pdf/scripts/fill.py",
    ]
    assert "cannot be verified" in parsed.warnings[0]


def test_the_cloudflare_form_reads_skill_and_file_digests_and_a_package() -> None:
    document = {
        "version": "0.2.0",
        "skills": [
            {
                "name": "a",
                "description": "A.",
                "digest": DIGEST,
                "files": [{"path": "SKILL.md", "digest": DIGEST}],
            },
            {
                "name": "b",
                "description": "B.",
                "digest": DIGEST,
                "files": [{"path": "SKILL.md", "digest": DIGEST}],
                "package": {"url": "b.zip", "digest": DIGEST},
            },
        ],
    }
    parsed = parse(document)
    by_name = {e.name: e for e in parsed.entries}
    assert parsed.form == "cloudflare" and parsed.warnings == ()
    assert (by_name["a"].kind, by_name["a"].skill_digest) == ("files", DIGEST)
    assert (by_name["b"].kind, by_name["b"].url, by_name["b"].digest) == (
        "archive",
        "https://example.com/.well-known/agent-skills/b.zip",
        DIGEST,
    )


def test_an_index_that_lists_a_path_outside_the_skill_is_flagged() -> None:
    [entry] = parse(
        {"skills": [{"name": "x", "description": "X.", "files": ["SKILL.md", "../x"]}]}
    ).entries
    assert entry.problem_path() == "../x"


@pytest.mark.parametrize(
    "document",
    [
        b"not json",
        b"[]",
        b'{"skills": 3}',
        json.dumps(
            {"$schema": "https://schemas.agentskills.io/discovery/9.0.0/schema.json", "skills": []}
        ).encode(),
        json.dumps({"version": "1.0.0", "skills": []}).encode(),
    ],
)
def test_documents_that_are_not_a_known_index_are_unusable(document: bytes) -> None:
    with pytest.raises(IndexUnusable):
        parse_index(document, index_url=INDEX)
