"""The official MCP Inspector CLI (2.12+) against `skillpack mcp`, when it is installed.

Set `SKILLPACK_INSPECTOR` to the Inspector's launcher (e.g.
`node_modules/.bin/mcp-inspector` of `npm install @modelcontextprotocol/inspector`)
with Node 22 or later first on PATH; without them these tests skip (`.ci/run` installs
them with `SKILLPACK_CI_INSPECTOR=1`: about two minutes).
The Inspector checks the skills extension against its specification: every entry's
conformance, every file's size and digest against what `resources/read` returns, and
the listed frontmatter against its own YAML 1.2 reading of the served SKILL.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from skill_client import write

from conftest import REAL_SKILLS, node_major

INSPECTOR = os.environ.get("SKILLPACK_INSPECTOR", "")
SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()", "mcp"]


pytestmark = pytest.mark.skipif(
    not (INSPECTOR and os.path.exists(INSPECTOR) and node_major() >= 22),
    reason="set SKILLPACK_INSPECTOR to the MCP Inspector CLI (2.12+) and put Node 22+ on PATH",
)

YAML_TRAPS: dict[str, str | bytes] = {
    "traps/SKILL.md": (
        "---\nname: traps\ndescription: YAML 1.1 and 1.2 disagree here. Use in tests.\n"
        "enabled: yes\nmode: off\nreleased: 2024-01-02\nstamp: 2024-01-02T10:00:00Z\n"
        "octal: 017\nnew-octal: 0o17\nsexagesimal: 1:20\nunderscored: 1_000\n"
        "metadata:\n  flags: [y, n, on]\n  version: 1.0\n<<: {merged: 1}\n---\nBody\n"
    ),
    "crlf/SKILL.md": "---\r\nname: crlf\r\ndescription: CRLF lines. Use in tests.\r\n---\r\nx\r\n",
    "bom/SKILL.md": "\ufeff---\nname: bom\ndescription: A byte order mark. Use in tests.\n---\nx\n",
    "bom/assets/pixel.gif": b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!",
    "outer/SKILL.md": "---\nname: outer\ndescription: Holds one. Use in tests.\n---\nx\n",
    "outer/inner/SKILL.md": "---\nname: inner\ndescription: Nested. Use in tests.\n---\nx\n",
    "outer/odd name/ünï.md": "non-ASCII path\n",
}


def inspector(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INSPECTOR, "--cli", *args], capture_output=True, text=True, timeout=600, env=env
    )


def child_env() -> list[str]:
    """The Inspector passes its stdio child only HOME, PATH and a few more: hand it the
    test's isolated skillpack folders."""
    names = ("SKILLPACK_HOME", "SKILLPACK_CACHE_DIR", "SKILLPACK_ADMIN_DIR", "XDG_CONFIG_HOME")
    return [arg for name in names for arg in ("-e", f"{name}={os.environ[name]}")]


def verify(*server: str, max_skills: int = 256) -> subprocess.CompletedProcess[str]:
    return inspector(
        "--method",
        "skills/list",
        "--verify",
        "--require-digests",
        "--skill-catalog-max-skills",
        str(max_skills),
        *child_env(),
        "--",
        *SERVE,
        *server,
    )


def strict_tools(*server: str) -> subprocess.CompletedProcess[str]:
    return inspector("--method", "tools/list", "--strict", *child_env(), "--", *SERVE, *server)


def reports(done: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_bundled_skills_verify_and_tool_schemas_are_portable(tmp_path: Path) -> None:
    done = verify("--no-user", "--cwd", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["name"] for r in reports(done)} >= {"writing-skills", "vetting-skills"}
    assert all(r["outcome"] == "verified" for r in reports(done))
    tools = strict_tools("--no-user", "--cwd", str(tmp_path))
    assert tools.returncode == 0, tools.stdout + tools.stderr
    assert "Error" not in tools.stderr
    # What the README and docs/mcp.md say: no error; the only warnings are the optional
    # arguments' nullable types (`["string", "null"]`).
    assert re.search(r"^0 errors, \d+ warnings", tools.stderr, re.M), tools.stderr
    issues = re.findall(r"^  Issue: (.*)$", tools.stderr, re.M)
    assert all(issue.startswith("`type` is an array") for issue in issues), issues


def test_yaml_traps_bom_crlf_binary_and_nesting_verify(tmp_path: Path) -> None:
    root = write(tmp_path / "skills", YAML_TRAPS)
    done = verify("--root", str(root), "--no-user", "--no-system", "--cwd", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(str(r["name"]) for r in reports(done)) == [
        "bom",
        "crlf",
        "inner",
        "outer",
        "traps",
    ]


@pytest.mark.corpus
def test_the_real_corpus_verifies(tmp_path: Path) -> None:
    roots = [REAL_SKILLS] + sorted(
        folder
        for folder in REAL_SKILLS.rglob(".*")
        if folder.is_dir() and any(folder.rglob("SKILL.md"))
    )
    args = [arg for root in roots for arg in ("--root", str(root))]
    done = verify(*args, "--no-user", "--cwd", str(tmp_path), max_skills=2000)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert len(reports(done)) > 300
    assert "no conformance errors" in done.stderr


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[tuple[str, str]]:
    token = "inspector-token"
    (tmp_path / "token").write_text(token, encoding="utf-8")
    with subprocess.Popen(
        [
            *SERVE,
            "--transport",
            "http",
            "--port",
            "0",
            "--json",
            "--no-user",
            "--token-file",
            str(tmp_path / "token"),
            "--cwd",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            yield json.loads(process.stdout.readline())["url"], token
        finally:
            process.terminate()
            process.wait(timeout=30)


def test_over_http_with_the_token_both_checks_pass(http_url: tuple[str, str]) -> None:
    url, token = http_url
    header = ["--header", f"Authorization: Bearer {token}"]
    done = inspector(url, *header, "--method", "skills/list", "--verify", "--require-digests")
    assert done.returncode == 0, done.stdout + done.stderr
    tools = inspector(url, *header, "--method", "tools/list", "--strict")
    assert tools.returncode == 0, tools.stdout + tools.stderr
    refused = inspector(url, "--stored-auth-only", "--method", "tools/list")
    assert refused.returncode == 3  # auth_required: no token, no entry


def test_the_yaml_1_2_reading_equals_the_inspectors_own_parser() -> None:
    """A differential check of `parse._yaml12` against the JavaScript `yaml` package the
    Inspector compares frontmatter with, on generated documents of YAML's trap values."""
    launcher = Path(INSPECTOR)
    found = [
        folder / "yaml" / "dist" / "index.js"
        for folder in (*launcher.parents, *launcher.resolve().parents)
        if folder.name == "node_modules" and (folder / "yaml" / "dist" / "index.js").is_file()
    ]
    if not found:
        pytest.skip("the Inspector's `yaml` package is not in a node_modules above it")
    yaml_js = found[0]
    import random

    from skillpack.parse._yaml12 import Yaml12Error, frontmatter_json, same_json

    values = [
        "yes",
        "No",
        "on",
        "OFF",
        "y",
        "true",
        "True",
        "tRUE",
        "null",
        "~",
        "",
        "017",
        "0o17",
        "0x1f",
        "0b11",
        "1_000",
        "1:20",
        "2024-01-02",
        "2024-01-02T10:00:00Z",
        "1.",
        ".5",
        "1e3",
        "-0",
        "+12",
        ".inf",
        ".NaN",
        "9007199254740993",
        "'q'",
        '"d"',
        '"\\x41"',
        "a b",
        "a #b",
        "a:b",
        "[1, on]",
        "{a: yes}",
        "|\n  x\n",
        ">-\n  a\n  b\n",
        "!!str 017",
        "! 12",
        "&a v",
        "=",
        "<<",
        "- a",
        "@x",
        "x: y",
    ]
    keys = ["name", "description", "a", "1", "true", "~", "yes", "'q k'", "<<", "2024-01-01"]
    rng = random.Random(15)
    docs = [
        "\n".join(f"{rng.choice(keys)}: {rng.choice(values)}" for _ in range(rng.randint(1, 4)))
        for _ in range(3000)
    ]
    script = (
        f"import {{ parse }} from {json.dumps(yaml_js.as_uri())};\n"
        "import fs from 'fs';\nprocess.emitWarning = () => {};\n"
        "const docs = JSON.parse(fs.readFileSync(0, 'utf8'));\n"
        "console.log(JSON.stringify(docs.map(t => { try { const v = parse(t);"
        " return {v: JSON.stringify(v === undefined ? null : v, (k, x) =>"
        " typeof x === 'number' && !isFinite(x) ? {nonfinite: String(x)} : x)}; }"
        " catch (e) { return {e: String(e)}; } })));\n"
    )
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        input=json.dumps(docs),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    theirs = json.loads(done.stdout)

    read = 0
    for doc, result in zip(docs, theirs, strict=True):
        try:
            ours = frontmatter_json(doc)
        except Yaml12Error:
            continue
        assert "v" in result, f"{doc!r}: we read {ours!r}, the yaml package refuses it"
        value = json.loads(result["v"])
        assert same_json(ours, value if value is not None else {}), doc
        read += 1
    assert read > 1000
