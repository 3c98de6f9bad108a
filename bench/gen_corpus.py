"""Generate a synthetic, deterministic skills corpus for benchmarks.

    python bench/gen_corpus.py OUT_DIR --skills 10000 [--seed 0] [--per-root 1000]

Layout (every run with the same arguments writes byte-identical files)::

    OUT_DIR/
      corpus.json                      the summary returned by `generate`
      root-00/                         one discovery root per `per_root` skills
        cat-03/sub-1/grp-2/<name>/SKILL.md   skills 1-3 category levels deep
        cat-03/<name>/references/*.md        ~30% of skills
        cat-03/<name>/scripts/*.py           ~20% of skills (+ __pycache__)
        cat-03/<name>/<child>/SKILL.md       ~1% nested skills (still discovered)
        cat-03/<name>/assets/template/SKILL.md   ~1% decoys (never discovered)
        node_modules/ .git/ .venv/ .cache/ __pycache__/   noise, with decoy SKILL.md files

The corpus is split into several roots because discovery bounds the walk to 2000
directories per root; one root per 1000 skills keeps every root well inside it, so
benchmarks measure discovery rather than the truncation guard.

About 2% of skills are deliberately broken (one of: no frontmatter, YAML that no
retry can repair, missing description with no body to take it from, unclosed
frontmatter); a correct discoverer
lists `summary["expected_listed"]` skills.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 2
"""Bumped whenever the output changes, so cached corpora are regenerated."""

SUMMARY_FILE = "corpus.json"
BROKEN_KINDS = ("no-frontmatter", "bad-yaml", "missing-description", "unclosed-frontmatter")


def _split(text: str, sep: str | None = None) -> tuple[str, ...]:
    """Word lists are written as prose so they stay readable and diffable."""
    return tuple(text.split(sep))


_VERBS = _split(
    "analyze audit build bundle check clean compose convert create debug deploy design "
    "diff document draft extract fetch format generate index inspect lint load map "
    "merge migrate monitor normalize optimize package parse plan profile publish "
    "query refactor release render report review scaffold scan schedule search "
    "summarize sync test trace transform translate triage tune upgrade validate verify "
    "visualize write"
)
_NOUNS = _split(
    "api changelog chart commit config container contract csv dashboard database "
    "dataset dependency diagram docker docs email endpoint experiment feature form "
    "graph invoice issue kubernetes lambda layout log manifest metric migration model "
    "notebook pdf pipeline playbook postgres presentation prompt pull-request queue "
    "readme release-notes report request schema screenshot sdk secret slide spreadsheet "
    "sql storage style-guide survey table terraform ticket timeline trace translation "
    "video webhook wiki workflow"
)
_QUALIFIERS = _split(
    "fast safe local remote batch incremental interactive minimal strict lenient "
    "python typescript rust go java swift kotlin web mobile cloud aws gcp azure "
    "team enterprise lite pro v2 legacy async"
)
_ADJECTIVES = _split(
    "structured reliable reproducible consistent readable concise detailed "
    "incremental careful thorough lightweight portable secure accessible"
)
_OBJECTS = _split(
    "source files, test suites, build logs, API responses, design documents, "
    "customer tickets, release branches, database schemas, CI pipelines, "
    "spreadsheets, slide decks, meeting notes, error reports, container images, "
    "configuration files, data exports, research papers, invoices",
    sep=", ",
)
_WHEN = (
    "the user asks to {verb} {obj}",
    "working with {obj} that need to be {adj}",
    "a task mentions {noun} or {noun2}",
    "preparing {obj} for review",
    "the repository contains {obj}",
    "someone needs {adj} output from {obj}",
)
_LICENSES = ("MIT", "Apache-2.0", "BSD-3-Clause", "Proprietary. See LICENSE.txt")
_TOOLS = ("Read", "Grep", "Glob", "Edit", "Write", "Bash(git:*)", "Bash(npm run:*)", "WebFetch")
_WORDS = _split(
    "the a this each every file step output input result check value list table "
    "section command script change error warning option default setting user team "
    "project repository branch build test run review note summary draft version "
    "first then next finally always never only when before after with without "
    "into from using keep make sure verify confirm record update remove add "
    "carefully quickly clearly small large new existing current previous final "
    "and or but so because unless"
)


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(lo, hi))
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng, 6, 18) for _ in range(rng.randint(2, 6)))


def _code_block(rng: random.Random) -> str:
    kind = rng.choice(("bash", "python", "yaml", "json"))
    if kind == "bash":
        lines = [
            f"{rng.choice(('npm run', 'make', 'uv run', 'git'))} {rng.choice(_VERBS)}"
            f" --{rng.choice(_QUALIFIERS)}"
            for _ in range(rng.randint(1, 6))
        ]
    elif kind == "python":
        func = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS).replace('-', '_')}"
        lines = [f"def {func}(path: str) -> dict:", f'    """{_sentence(rng, 4, 10)}"""']
        lines += [f"    # {_sentence(rng, 3, 8)}" for _ in range(rng.randint(0, 3))]
        lines += ["    data = load(path)", "    return {'ok': True, 'items': data}"]
    elif kind == "yaml":
        # A YAML document marker inside a fence: never a frontmatter boundary.
        lines = ["---", f"name: {rng.choice(_NOUNS)}", f"mode: {rng.choice(_QUALIFIERS)}"]
    else:
        lines = ["{", f'  "{rng.choice(_NOUNS)}": "{rng.choice(_VERBS)}",', '  "ok": true', "}"]
    return f"```{kind}\n" + "\n".join(lines) + "\n```"


def _bullets(rng: random.Random) -> str:
    numbered = rng.random() < 0.4
    items = []
    for i in range(rng.randint(3, 8)):
        marker = f"{i + 1}." if numbered else "-"
        items.append(f"{marker} {_sentence(rng, 4, 14)}")
    return "\n".join(items)


def _table(rng: random.Random) -> str:
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for _ in range(rng.randint(2, 6)):
        rows.append(
            f"| `--{rng.choice(_QUALIFIERS)}` | `{rng.choice(('true', 'false', '0', 'auto'))}`"
            f" | {_sentence(rng, 3, 9)} |"
        )
    return "\n".join(rows)


class _Pools:
    """Pre-generated Markdown blocks; bodies are assembled from them (fast, still varied)."""

    def __init__(self, rng: random.Random) -> None:
        self.paragraphs = [_paragraph(rng) for _ in range(400)]
        self.code = [_code_block(rng) for _ in range(200)]
        self.lists = [_bullets(rng) for _ in range(200)]
        self.tables = [_table(rng) for _ in range(60)]


def _body(rng: random.Random, pools: _Pools, title: str) -> str:
    # Log-uniform 1-19 KB: most real skills are small, a few are long.
    target = int(1024 * 19 ** rng.random())
    parts = [f"# {title}", rng.choice(pools.paragraphs)]
    step = 0
    size = 0  # of the parts counted so far, each with its "\n\n"
    counted = 0
    while True:
        size += sum(len(p) + 2 for p in parts[counted:])
        counted = len(parts)
        if size >= target:
            break
        roll = rng.random()
        if roll < 0.18:
            step += 1
            parts.append(f"## Step {step}: {rng.choice(_VERBS).capitalize()} the {title.lower()}")
        elif roll < 0.24:
            parts.append(f"### {rng.choice(_ADJECTIVES).capitalize()} {rng.choice(_NOUNS)}")
        elif roll < 0.52:
            parts.append(rng.choice(pools.paragraphs))
        elif roll < 0.70:
            parts.append(rng.choice(pools.lists))
        elif roll < 0.86:
            parts.append(rng.choice(pools.code))
        elif roll < 0.93:
            parts.append(rng.choice(pools.tables))
        else:
            parts.append("---")  # a horizontal rule: must not end the frontmatter
    return "\n\n".join(parts) + "\n"


def _description(rng: random.Random, verb: str, noun: str) -> str:
    """A realistic description, 40-600 characters."""
    limit = rng.randint(40, 600)
    fill = {
        "verb": verb,
        "noun": noun,
        "noun2": rng.choice(_NOUNS),
        "obj": rng.choice(_OBJECTS),
        "adj": rng.choice(_ADJECTIVES),
    }
    text = (
        f"{verb.capitalize()} {noun.replace('-', ' ')} work with {fill['adj']} results. "
        f"Use when {rng.choice(_WHEN).format(**fill)}."
    )
    if rng.random() < 0.03:
        text += " Covers end-to-end---and partial---runs."
    while len(text) < limit:
        text += " " + _sentence(rng, 5, 16)
    if len(text) > limit:
        cut = text.rfind(" ", 0, limit - 1)
        text = text[: cut if cut >= 40 else limit - 1].rstrip(" ,.") + "."
    return text


def _wrap(text: str, width: int = 76) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def _frontmatter(rng: random.Random, name: str, description: str) -> tuple[str, int]:
    """The YAML between the `---` lines; returns it and how many optional fields it has."""
    lines = [f"name: {name}"]
    style = rng.random()
    if style < 0.6:
        lines.append(f"description: {description}")
    elif style < 0.8:
        lines.append(f'description: "{description}"')
    else:
        lines.append("description: >-")
        lines += [f"  {line}" for line in _wrap(description)]
    optional = 0
    if rng.random() < 0.25:
        optional += 1
        lines.append(f"license: {rng.choice(_LICENSES)}")
    if rng.random() < 0.2:
        optional += 1
        lines.append("metadata:")
        lines.append(f"  author: {rng.choice(_QUALIFIERS)}-team")
        # Unquoted numbers are realistic: they load, with a metadata-coerced warning.
        version = f"{rng.randint(0, 3)}.{rng.randint(0, 9)}"
        lines.append(f'  version: "{version}"' if rng.random() < 0.7 else f"  version: {version}")
    if rng.random() < 0.15:
        optional += 1
        tools = rng.sample(_TOOLS, k=rng.randint(1, 4))
        if rng.random() < 0.5:
            lines.append("allowed-tools: " + " ".join(t for t in tools if " " not in t))
        else:
            lines.append("allowed-tools:")
            lines += [f'  - "{t}"' for t in tools]
    if rng.random() < 0.1:
        optional += 1
        lines.append(f'argument-hint: "[{rng.choice(_NOUNS)}] [--{rng.choice(_QUALIFIERS)}]"')
    return "\n".join(lines), optional


def _broken_text(kind: str, name: str, description: str, body: str) -> str:
    if kind == "no-frontmatter":
        return body
    if kind == "bad-yaml":
        # A flow mapping left open on a line of its own: no key, so no retry repairs it.
        return f"---\nname: {name}\ndescription: {description}\n{{broken: [1, 2\n---\n{body}"
    if kind == "missing-description":
        # No body either: a body's first paragraph would stand in for the description.
        return f"---\nname: {name}\nlicense: MIT\n---\n"
    if kind == "unclosed-frontmatter":
        return f"---\nname: {name}\ndescription: {description}\n\n{body}"
    raise ValueError(f"unknown broken kind {kind!r}; expected one of {BROKEN_KINDS}")


def _script(rng: random.Random, name: str) -> str:
    func = name.replace("-", "_")
    return (
        f'"""Helper script for the {name} skill."""\n\nimport json\nimport sys\n\n\n'
        f"def {func}(argv: list[str]) -> int:\n"
        f"    # {_sentence(rng, 4, 10)}\n"
        "    print(json.dumps({'args': argv}))\n    return 0\n\n\n"
        f'if __name__ == "__main__":\n    sys.exit({func}(sys.argv[1:]))\n'
    )


def _decoy(name: str) -> str:
    return f"---\nname: {name}\ndescription: A decoy that discovery must never list.\n---\n# No\n"


def _write_noise(root: Path, rng: random.Random, pools: _Pools) -> int:
    """Write node_modules/.git/.venv/.cache/__pycache__ junk; return the decoy count."""
    nm = root / "node_modules"
    for i in range(rng.randint(15, 30)):
        pkg = nm / f"{rng.choice(_NOUNS)}-{rng.choice(_VERBS)}-{i}"
        (pkg / "lib").mkdir(parents=True, exist_ok=True)
        (pkg / "package.json").write_text(
            json.dumps({"name": pkg.name, "version": f"1.{i}.0", "main": "lib/index.js"}),
            encoding="utf-8",
        )
        (pkg / "lib" / "index.js").write_text(
            f"module.exports = function () {{ return {i}; }};\n", encoding="utf-8"
        )
        (pkg / "README.md").write_text(rng.choice(pools.paragraphs) + "\n", encoding="utf-8")
    decoy_dirs = [
        nm / "@acme" / "skill-kit" / "templates" / "example-skill",
        root / ".git" / "skills" / "git-decoy",
        root / ".venv" / "lib" / "python3.11" / "site-packages" / "kit" / "venv-decoy",
        root / ".cache" / "hidden-decoy",
        root / "__pycache__" / "pycache-decoy",
    ]
    for folder in decoy_dirs:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(_decoy(folder.name), encoding="utf-8")
    git = root / ".git"
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (git / "refs" / "heads" / "main").write_text(f"{rng.getrandbits(160):040x}\n", "utf-8")
    for _ in range(rng.randint(60, 120)):
        digest = f"{rng.getrandbits(160):040x}"
        folder = git / "objects" / digest[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / digest[2:]).write_bytes(rng.randbytes(rng.randint(40, 600)))
    (root / "__pycache__" / "conftest.cpython-311.pyc").write_bytes(rng.randbytes(256))
    return len(decoy_dirs)


def _category_dirs(rng: random.Random, n_skills: int) -> list[str]:
    """Relative category paths, 1-3 levels deep (`cat-07`, `cat-07/sub-3/grp-1`, ...)."""
    paths: list[str] = []
    for c in range(max(3, n_skills // 100)):
        cat = f"cat-{c:02d}"
        paths.append(cat)
        for s in range(rng.randint(0, 4)):
            sub = f"{cat}/sub-{s}"
            paths.append(sub)
            paths += [f"{sub}/grp-{g}" for g in range(rng.randint(0, 3))]
    return paths


def _unique_name(rng: random.Random, taken: set[str]) -> tuple[str, str, str]:
    verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
    name = f"{verb}-{noun}"
    if rng.random() < 0.5:
        name += f"-{rng.choice(_QUALIFIERS)}"
    base, k = name, 2
    while name in taken:
        name = f"{base}-{k}"
        k += 1
    taken.add(name)
    return name, verb, noun


def generate(
    out_dir: str | Path, n_skills: int, seed: int = 0, *, per_root: int = 1000
) -> dict[str, Any]:
    """Write a corpus of `n_skills` SKILL.md files under `out_dir` and return its summary.

    `out_dir` must not exist or be empty. The same `(n_skills, seed, per_root)` always
    writes the same files. The summary (also written to `out_dir/corpus.json`) holds
    the root folder names, counts per kind and `expected_listed`: the number of skills
    a correct discoverer lists over all roots.
    """
    if n_skills < 1:
        raise ValueError(f"n_skills must be at least 1, got {n_skills}")
    if per_root < 1:
        raise ValueError(f"per_root must be at least 1, got {per_root}")
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; pass a new directory or delete it first")
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    pools = _Pools(rng)
    n_roots = -(-n_skills // per_root)
    broken_at = dict.fromkeys(rng.sample(range(n_skills), k=round(n_skills * 0.02)), "")
    for i, index in enumerate(sorted(broken_at)):
        broken_at[index] = BROKEN_KINDS[i % len(BROKEN_KINDS)]
    counts = dict.fromkeys(
        ("references", "scripts", "nested", "optional_fields", "asset_decoys", "noise_decoys"), 0
    )
    broken = dict.fromkeys(BROKEN_KINDS, 0)
    taken: set[str] = set()
    total_bytes = 0
    roots: list[str] = []
    index = 0
    for r in range(n_roots):
        root_name = f"root-{r:02d}"
        roots.append(root_name)
        root = out / root_name
        in_root = n_skills // n_roots + (1 if r < n_skills % n_roots else 0)
        categories = _category_dirs(rng, in_root)
        hosts: list[Path] = []  # valid, non-nested skill dirs that may hold a nested skill
        for _ in range(in_root):
            name, verb, noun = _unique_name(rng, taken)
            nested = bool(hosts) and rng.random() < 0.01
            if nested:
                folder = rng.choice(hosts) / name
                counts["nested"] += 1
            else:
                folder = root / rng.choice(categories) / name
            folder.mkdir(parents=True)
            description = _description(rng, verb, noun)
            body = _body(rng, pools, name.replace("-", " ").title())
            kind = broken_at.get(index)
            if kind:
                text = _broken_text(kind, name, description, body)
                broken[kind] += 1
            else:
                frontmatter, optional = _frontmatter(rng, name, description)
                counts["optional_fields"] += optional > 0
                text = f"---\n{frontmatter}\n---\n{body}"
                if not nested:
                    hosts.append(folder)
            data = text.encode("utf-8")
            total_bytes += len(data)
            (folder / "SKILL.md").write_bytes(data)
            if rng.random() < 0.3:
                counts["references"] += 1
                (folder / "references").mkdir()
                for j in range(rng.randint(1, 3)):
                    ref = "\n\n".join(rng.choices(pools.paragraphs, k=rng.randint(2, 8)))
                    (folder / "references" / f"{rng.choice(_NOUNS)}-{j}.md").write_text(
                        f"# {rng.choice(_ADJECTIVES).title()} reference\n\n{ref}\n",
                        encoding="utf-8",
                    )
            if rng.random() < 0.2:
                counts["scripts"] += 1
                (folder / "scripts" / "__pycache__").mkdir(parents=True)
                (folder / "scripts" / f"{name.replace('-', '_')}.py").write_text(
                    _script(rng, name), encoding="utf-8"
                )
                (folder / "scripts" / "__pycache__" / "helper.cpython-311.pyc").write_bytes(
                    rng.randbytes(128)
                )
            if rng.random() < 0.01:
                counts["asset_decoys"] += 1
                template = folder / "assets" / "template"
                template.mkdir(parents=True)
                (template / "SKILL.md").write_text(_decoy("asset-template"), encoding="utf-8")
            index += 1
        counts["noise_decoys"] += _write_noise(root, rng, pools)
    broken_total = sum(broken.values())
    summary: dict[str, Any] = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "n_skills": n_skills,
        "per_root": per_root,
        "roots": roots,
        "broken": broken,
        "broken_total": broken_total,
        "expected_listed": n_skills - broken_total,
        "with_references": counts["references"],
        "with_scripts": counts["scripts"],
        "with_optional_fields": counts["optional_fields"],
        "nested": counts["nested"],
        "decoys": counts["asset_decoys"] + counts["noise_decoys"],
        "skill_md_bytes": total_bytes,
    }
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="directory to create (must be new or empty)")
    parser.add_argument("--skills", type=int, default=1000, help="number of skills (1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--per-root", type=int, default=1000, help="skills per root (1000)")
    parser.add_argument("--force", action="store_true", help="delete OUT_DIR first")
    args = parser.parse_args(argv)
    if args.force and args.out_dir.exists():
        shutil.rmtree(args.out_dir)
    started = time.perf_counter()
    try:
        summary = generate(args.out_dir, args.skills, args.seed, per_root=args.per_root)
    except (FileExistsError, ValueError) as exc:
        print(f"gen_corpus: {exc}", file=sys.stderr)
        return 2
    summary["seconds"] = round(time.perf_counter() - started, 2)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
