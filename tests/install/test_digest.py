"""Digests: the discovery draft's skill digest, artifact digests, the npm CLI's computedHash."""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import subprocess

import pytest

from skillpack.install._digest import (
    _js_locale_key,
    computed_hash,
    file_digests,
    is_digest,
    legacy_index_digest,
    sha256_digest,
    skill_digest,
)

# The two-file example of the cloudflare/agent-skills-discovery-rfc README (v0.2.0).
RFC_FILES = {"SKILL.md": b"# Hello\n", "scripts/run.sh": b"#!/bin/sh\n"}
RFC_DIGEST = "sha256:34f7a8c484e9991f3e71a309f31332d6335efc01f544105c4185a7c4ab12eb1e"

# A skill installed by `skills` 1.7.4 (`skills add … -y`): the computedHash it wrote into
# skills-lock.json for these exact files.
TOOLBOX = {
    "SKILL.md": b"---\nname: toolbox\ndescription: Run the toolbox helper script. Use when you "
    b"need the toolbox.\n---\n\n# Toolbox\n\nRun `scripts/run.sh`. See "
    b"[references/REF.md](references/REF.md).\n",
    "references/REF.md": b"# Reference\n\nDetails.\n",
    "scripts/run.sh": b"#!/bin/sh\necho toolbox\n",
}
TOOLBOX_COMPUTED_HASH = "78f0301a86595bf10e48252b638edfc51def36554d46ee359aa1c64d25f0f9c7"
HELLO = {
    "SKILL.md": b"---\nname: hello-md\ndescription: Say hello politely. Use when greeting "
    b"someone.\n---\n\n# Hello\n\nGreet the user by name.\n"
}
HELLO_COMPUTED_HASH = "a6c1bb71418dc2dcca5f145748dc7aac8cdc15591da82e8bb4ac343901fa06f1"


def test_the_rfc_worked_example_gives_its_skill_digest() -> None:
    assert skill_digest(file_digests(RFC_FILES)) == RFC_DIGEST


def test_the_skill_digest_does_not_depend_on_the_order_files_are_given() -> None:
    reversed_digests = dict(reversed(list(file_digests(RFC_FILES).items())))
    assert skill_digest(reversed_digests) == RFC_DIGEST


def test_a_changed_byte_or_path_changes_the_skill_digest() -> None:
    assert skill_digest(file_digests({**RFC_FILES, "SKILL.md": b"# Hello!\n"})) != RFC_DIGEST
    renamed = {"SKILL.md": RFC_FILES["SKILL.md"], "scripts/run2.sh": RFC_FILES["scripts/run.sh"]}
    assert skill_digest(file_digests(renamed)) != RFC_DIGEST


def test_artifact_digests_are_sha256_of_the_bytes_in_lowercase_hex() -> None:
    assert sha256_digest(b"") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    assert is_digest(sha256_digest(b"x"))
    assert not is_digest(sha256_digest(b"x").upper().replace("SHA256", "sha256"))
    assert not is_digest("sha256:abc")
    assert not is_digest(None)


def test_computed_hash_equals_what_the_skills_cli_wrote_for_the_same_files() -> None:
    assert computed_hash(TOOLBOX) == TOOLBOX_COMPUTED_HASH
    assert computed_hash(HELLO) == HELLO_COMPUTED_HASH


def test_computed_hash_sorts_like_locale_compare_not_by_bytes() -> None:
    # Byte order puts SKILL.md first; localeCompare puts it last (s > r, case-insensitive).
    ordered = sorted(TOOLBOX, key=_js_locale_key)
    assert ordered == ["references/REF.md", "scripts/run.sh", "SKILL.md"]


def test_legacy_index_digest_hashes_sorted_paths_and_contents_with_nul_separators() -> None:
    import hashlib

    # JavaScript's default sort compares UTF-16 code units: uppercase first.
    by_code_unit = hashlib.sha256(
        b"SKILL.md\0" + TOOLBOX["SKILL.md"] + b"\0"
        b"references/REF.md\0" + TOOLBOX["references/REF.md"] + b"\0"
        b"scripts/run.sh\0" + TOOLBOX["scripts/run.sh"] + b"\0"
    ).hexdigest()
    assert legacy_index_digest(TOOLBOX) == "sha256:" + by_code_unit


def _node() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    major = int(version.lstrip("v").split(".")[0] or 0)
    return node if major >= 22 else None


@pytest.mark.skipif(_node() is None, reason="needs Node >= 22 on PATH (differential check)")
def test_the_locale_order_equals_node_locale_compare_on_random_ascii_paths() -> None:
    node = _node()
    assert node is not None
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "._-/ @+"
    paths = sorted(
        {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(500)}
    )
    script = (
        "const p = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "p.sort((a, b) => a.localeCompare(b)); console.log(JSON.stringify(p));"
    )
    env = {**os.environ, "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
    result = subprocess.run(
        [node, "-e", script],
        input=json.dumps(paths),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(result.stdout) == sorted(paths, key=_js_locale_key)


def test_legacy_index_digests_match_what_the_skills_cli_recorded() -> None:
    # skills 1.7.4 recorded these (abbreviated in the research notes) for a legacy index.
    hello, toolbox = legacy_index_digest(HELLO), legacy_index_digest(TOOLBOX)
    assert hello.startswith("sha256:06e28767") and hello.endswith("0a963")
    assert toolbox.startswith("sha256:93467f35") and toolbox.endswith("ee4c7")
