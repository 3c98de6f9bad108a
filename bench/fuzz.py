"""A seeded fuzzer for what strangers write and models send.

Runs N generated inputs per target and prints, per target: inputs, inputs per
second, crashes (an exception the target does not promise, or a dead worker: a
segfault), hangs (an input that took over `--hang` seconds, or a worker that stopped
answering and was killed) and invariant breaks (a wrong answer). Every input is
made from `(seed, target, index)` alone, so any finding replays with
`--target T --replay INDEX` (same `--seed`).

```sh
python bench/fuzz.py                          # 20,000 inputs per target, seed 0
python bench/fuzz.py --inputs 170000          # 1,020,000 inputs over the 6 targets
python bench/fuzz.py --target parse --replay 4711 --seed 3
```

Targets: `parse` (parse_skill_bytes on random bytes, mutated real SKILL.md files and
generated YAML, some with a Codex sidecar), `fastyaml` (load_simple equals libyaml
or gives up), `mentions` (find_mentions and resolve_message), `substitute`
(substitute, and split_arguments against shlex.split), `tools` (SkillTools.call on an
in-memory catalog, every argument the model controls), `confine` (the path rule of
skill_read_file). Workers run in child processes (`--jobs`), watched by the parent.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import shlex
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "real-skills"
TARGETS = ("parse", "fastyaml", "mentions", "substitute", "tools", "confine")
CHUNK = 500
"""Inputs a worker runs before it reports; the watchdog sees progress per input."""

# ------------------------------------------------------------------ generators

YAML_ATOMS = [
    "a", "Use this", "C#", "x:y", "x: y", "#c", " #c", "1", "0", "00", "1.5", "1.0.0", "0x1F",
    "2024-01-02", "2024-13-45", "true", "Yes", "null", "~", "'q'", '"d"', '"a\\"b"', "''", "é",
    "[a]", "{a: 1}", "&x a", "*x", "!t a", "!!binary aGk=", "- a", "a,b", "a  b", "a---b", "|",
    ">", "\t", "NaN", ".inf", "1e3", "1_000", "12:30:45", "<<", "? ", "\u2028", "\x85", "\ufeff",
    "\x1b[2J", "\u202e", "\\", "%YAML 1.1", "---", "...", "@", "`",
]  # fmt: skip
HOSTILE = [
    lambda r: "x: " + "[" * r.choice([65, 500, 30_000]),
    lambda r: "x: " + "{a: " * r.choice([65, 3000]),
    lambda r: "x:\n" + "- " * r.choice([65, 30_000]) + "a",
    lambda r: "\n".join(" " * i + f"k{i}:" for i in range(r.choice([65, 400]))) + " v",
    lambda r: "m0: &m0 {a: 1, b: 2}\n"
    + "\n".join(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}]}}" for i in range(1, r.randint(2, 40))),
    lambda r: "a: &a [x, y]\n" + "\n".join(f"b{i}: &b{i} [*{'a' if i == 0 else f'b{i - 1}'}] * 9"
                                           for i in range(r.randint(1, 12))),
    lambda r: "n: 0x" + "f" * r.choice([10, 300, 4000]),
    lambda r: "n: " + "9" * r.choice([18, 300, 5000]),
    lambda r: "n: " + ":".join(["59"] * r.choice([3, 200])),
    lambda r: "a: &a [*a]",
    lambda r: "t: !!python/object:os.system x",
    lambda r: "d: " + "x" * r.choice([1000, 300_000]),
]  # fmt: skip


def yaml_text(r: random.Random) -> str:
    """Frontmatter-shaped YAML: values, block scalars, lists, maps, hostile pieces."""
    keys = ["name", "description", "metadata", "allowed-tools", "on", "y", "k", "hooks", "<<"]

    def value() -> str:
        return "".join(r.choice(YAML_ATOMS) for _ in range(r.randint(1, 3)))

    lines: list[str] = []
    for _ in range(r.randint(1, 7)):
        key, kind = r.choice(keys), r.random()
        if kind < 0.45:
            lines.append(f"{key}: {value()}")
        elif kind < 0.6:
            lines.append(f"{key}: {r.choice(['>', '>-', '|', '|-', '>+', '|2'])}")
            indent = " " * r.choice([1, 2, 4])
            lines += [indent + value() if r.random() < 0.9 else "" for _ in range(r.randint(0, 3))]
        elif kind < 0.75:
            lines.append(f"{key}:")
            lines += [f"  - {value()}" for _ in range(r.randint(0, 3))]
        elif kind < 0.9:
            lines.append(f"{key}:")
            lines += [f"  {r.choice(keys)}: {value()}" for _ in range(r.randint(0, 3))]
        elif kind < 0.95:
            lines.append(r.choice(HOSTILE)(r))
        else:
            lines.append(r.choice(["# c", "", "  ", "#", "- x", "? y"]))
    return "\n".join(lines) + r.choice(["", "\n"])


def mutate(data: bytes, r: random.Random, others: list[bytes]) -> bytes:
    """A real file changed a few times: bytes flipped, inserted, cut or spliced."""
    out = bytearray(data)
    for _ in range(r.randint(1, 8)):
        kind = r.random()
        at = r.randint(0, len(out))
        if kind < 0.3 and out:
            out[min(at, len(out) - 1)] ^= 1 << r.randint(0, 7)
        elif kind < 0.55:
            out[at:at] = r.choice(YAML_ATOMS).encode() if r.random() < 0.7 else r.randbytes(3)
        elif kind < 0.7:
            del out[at : at + r.randint(1, 64)]
        elif kind < 0.8 and others:
            other = r.choice(others)
            start = r.randint(0, len(other))
            out[at:at] = other[start : start + r.randint(1, 400)]
        elif kind < 0.9:
            line_end = out.find(b"\n", at)
            if line_end > 0:
                out[line_end:line_end] = out[at:line_end] * r.randint(1, 4)
        else:
            out[at:at] = r.choice(HOSTILE)(r).encode() + b"\n"
    return bytes(out)


def skill_bytes(r: random.Random, corpus: list[bytes]) -> tuple[bytes, str | None]:
    kind = r.random()
    if kind < 0.15:
        data = r.randbytes(r.randint(0, 300))
    elif kind < 0.55 and corpus:
        data = mutate(r.choice(corpus), r, corpus)
    else:
        opening = r.choice(["---\n", "\ufeff---\r\n", "--- \n", "", "---"])
        closing = r.choice(["\n---\n", "\n---", "\n----\n", ""])
        data = (opening + yaml_text(r) + closing + "# Body\n$ARGUMENTS\n").encode(
            "utf-8", "surrogatepass"
        )
    codex = yaml_text(r) if r.random() < 0.15 else None
    return data, codex


MESSAGE_PIECES = [
    "$pdf", "$pdf-forms", "$ns:pdf", "$PATH", "$5", "$5k", "$x$", "$$pdf", "[$pdf](a/SKILL.md)",
    "[$pdf](https://x)", "`$pdf`", "```\n$pdf\n```", "~~~", "``", "`", "/pdf ", "/help ", " ",
    "\n", "\n\n", "(", "'", "“", "é", "$3d-model", "$nope", "$dup", "\\$pdf", "$ARGUMENTS", ":",
    "\t", "$a:b:c", "[", "](", "<", ">", "$user-only", "$tools", "$PDF", "$pdf-form", "\u202e",
]  # fmt: skip


def message(r: random.Random) -> str:
    pieces = [r.choice(MESSAGE_PIECES) for _ in range(r.randint(0, 30))]
    if r.random() < 0.01:
        pieces.append(" ".join(f"$nope-{i}" for i in range(r.randint(100, 5000))))
    if r.random() < 0.01:
        pieces.append(("`" * r.randint(1, 9) + " x ") * r.randint(1, 2000))
    return "".join(pieces)


BODY_PIECES = [
    "$ARGUMENTS", "$ARGUMENTS[0]", "$ARGUMENTS[12]", "$0", "$1", "$9", "${SKILL_DIR}",
    "${CLAUDE_SKILL_DIR}", "${SESSION_ID}", "${FOO}", "$file", "${file}", "\\$ARGUMENTS",
    "\\$0", "$", "\\", "text ", "\n", "```", "$file_name", "$ARGUMENTSX", "$10",
]  # fmt: skip
ARG_PIECES = [
    "a", "b c", "'q r'", '"d e"', '"x\\"y"', "\\ ", "'", '"', "\\", "\t", "\n", " ", "$1",
    "$ARGUMENTS", "é", "\u00a0", "\r",
]  # fmt: skip


def body_and_args(r: random.Random) -> tuple[str, str]:
    body = "".join(r.choice(BODY_PIECES) for _ in range(r.randint(0, 25)))
    if r.random() < 0.005:
        body += "$ARGUMENTS\n" * r.randint(100, 3000)
    args = "".join(r.choice(ARG_PIECES) for _ in range(r.randint(0, 15)))
    if r.random() < 0.005:
        args *= r.randint(100, 3000)
    return body, args


PATH_PIECES = [
    "references", "guide.md", "..", ".", "", "%2e%2e", "%252e%252e", "%2f", "\\", "/", "C:",
    ".hidden", "a\x00b", "%00", "SKILL.md", "é", "..\\..", "~", "%", "node_modules", "\udcff",
]  # fmt: skip


def rel_path(r: random.Random) -> str:
    parts = [r.choice(PATH_PIECES) for _ in range(r.randint(0, 8))]
    path = r.choice(["/", "\\", ""]).join(parts) if parts else ""
    if r.random() < 0.3:
        path = r.choice(["/", "\\", "", "./"]) + path
    if r.random() < 0.01:
        path = "a/" * r.randint(1000, 300_000)
    return path


def tool_call(r: random.Random) -> tuple[str, Any]:
    tool = r.choice(["skill_search", "skill_load", "use_skill", "skill_read_file", "nope"])
    keys = ["query", "limit", "scope", "name", "path", "args", "skill", "extra"]

    def value() -> Any:
        kind = r.random()
        if kind < 0.35:
            return r.choice(["pdf", "dup", "user-only", "/a/pdf/SKILL.md", "references/x.md",
                             "pdf forms", "../x", "extra", "user", "ns:pdf", "", " "])  # fmt: skip
        if kind < 0.5:
            return "".join(r.choice(MESSAGE_PIECES + ARG_PIECES) for _ in range(r.randint(0, 9)))
        if kind < 0.6:
            return r.choice([None, True, False, 0, -1, 8, 51, 10**30, 1.5, float("nan")])
        if kind < 0.7:
            return [value() for _ in range(r.randint(0, 2))]
        if kind < 0.75:
            return {"k": value()}
        return "x" * r.choice([10, 4097, 70_000, 1_100_000])

    if r.random() < 0.05:
        return tool, r.choice([None, [], "text", 7])
    return tool, {r.choice(keys): value() for _ in range(r.randint(0, 4))}


# ------------------------------------------------------------------ targets


class Break(Exception):
    """An invariant did not hold: a wrong answer, not an error."""


@dataclass
class Context:
    corpus: list[bytes]
    documented: frozenset[str]
    tools: Any = None
    catalog: Any = None
    skill: Any = None


def documented_codes() -> frozenset[str]:
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## Problem codes (stable)", 1)[1].split("\n## ", 1)[0]
    return frozenset(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", section))


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, value)


def run_parse(r: random.Random, ctx: Context) -> None:
    from skillpack.parse._frontmatter import parse_skill_bytes
    from skillpack.parse._skill_json import skill_to_dict

    data, codex = skill_bytes(r, ctx.corpus)
    strict = r.random() < 0.2
    parsed = parse_skill_bytes(data, path="/f/x/SKILL.md", codex_yaml=codex, strict=strict)
    codes = {p.code for p in parsed.problems}
    if not codes <= ctx.documented:
        raise Break(f"undocumented codes {sorted(codes - ctx.documented)}")
    if (parsed.skill is None) != any(p.severity == "error" for p in parsed.problems):
        raise Break("skill present with an error, or absent without one")
    if parsed.skill is not None:
        json.dumps(skill_to_dict(parsed.skill))


def run_fastyaml(r: random.Random, ctx: Context) -> None:
    import yaml

    from skillpack.parse._fastyaml import load_simple
    from skillpack.parse._yaml import load_with_libyaml

    text = (
        yaml_text(r)
        if r.random() < 0.8
        else "".join(r.choice(YAML_ATOMS + [":", " ", "\n", "- "]) for _ in range(r.randint(0, 20)))
    )
    fast_plain: dict[str, str] = {}
    fast = load_simple(text, fast_plain)
    if fast is None:
        return
    plain: dict[str, str] = {}
    try:
        expected = load_with_libyaml(text, plain)
    except yaml.YAMLError as exc:
        raise Break(f"the fast path read text libyaml refuses ({exc})") from None
    if typed(fast) != typed(expected):
        raise Break("the fast path disagrees with libyaml")
    if fast_plain != plain:
        raise Break("the fast path's plain-scalar texts disagree with the loader's")


def run_mentions(r: random.Random, ctx: Context) -> None:
    from skillpack._limits import MAX_DIAGNOSTICS
    from skillpack.select._mentions import find_mentions
    from skillpack.select._resolve import resolve_message

    text = message(r)
    for mention in find_mentions(text):
        if text[mention.start : mention.end] != mention.token:
            raise Break("a mention's token is not the text it spans")
    resolution = resolve_message(
        text,
        ctx.catalog,
        invoker=r.choice(["user", "model"]),
        multi_mention=r.choice(["choose-one", "all"]),
        base_dir="/a",
    )
    if len(resolution.diagnostics) > MAX_DIAGNOSTICS + 2:
        raise Break(f"{len(resolution.diagnostics)} diagnostics")


def reference_split(args: str) -> tuple[str, ...]:
    if not args.strip():
        return ()
    try:
        return tuple(shlex.split(args))
    except ValueError:
        return tuple(args.split())


def run_substitute(r: random.Random, ctx: Context) -> None:
    from skillpack._errors import UsageError
    from skillpack._limits import MAX_EXPANSION_CHARS
    from skillpack.render._substitute import split_arguments, substitute

    body, args = body_and_args(r)
    if len(args) < 2000 and split_arguments(args) != reference_split(args):
        raise Break("split_arguments differs from shlex.split")
    try:
        out = substitute(body, args=args, skill=ctx.skill if r.random() < 0.5 else None,
                         session_id="sid")  # fmt: skip
    except UsageError:
        return
    if len(out) > len(body) + MAX_EXPANSION_CHARS + len(args) + 13:
        raise Break(f"substitution grew the body by {len(out) - len(body)}")


def run_tools(r: random.Random, ctx: Context) -> None:
    tool, args = tool_call(r)
    result = ctx.tools.call(tool, args)
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        raise Break("not an envelope")
    if not result["ok"] and result["error"]["code"] == "INTERNAL_ERROR":
        raise Break(f"INTERNAL_ERROR: {result['error']['message'][:200]}")
    if len(json.dumps(result)) > 2_000_000:
        raise Break("a result over 2 MB")


def run_confine(r: random.Random, ctx: Context) -> None:
    import posixpath
    from urllib.parse import unquote

    from skillpack._errors import SkillNotFoundError, SkillPermissionError
    from skillpack.discovery._confine import confined_parts

    path = rel_path(r)
    try:
        parts = confined_parts(ctx.skill, path)
    except (SkillPermissionError, SkillNotFoundError):
        return
    for spelling in (path, unquote(path), unquote(unquote(path))):
        joined = posixpath.normpath(posixpath.join("/base", spelling.replace("\\", "/")))
        if joined != "/base" and not joined.startswith("/base/"):
            raise Break(f"{path!r} leaves the folder as {joined!r}")
    if any(not p or p in (".", "..") or p.startswith(".") or "\x00" in p for p in parts):
        raise Break(f"{path!r} gave parts {parts!r}")


RUNNERS: dict[str, Callable[[random.Random, Context], None]] = {
    "parse": run_parse,
    "fastyaml": run_fastyaml,
    "mentions": run_mentions,
    "substitute": run_substitute,
    "tools": run_tools,
    "confine": run_confine,
}


def make_context(corpus_dir: Path | None) -> Context:
    import sqlite3

    from skillpack._model import Skill
    from skillpack.discovery._memory import MemorySkills
    from skillpack.runtime._session import Session
    from skillpack.runtime._tools import SkillTools

    corpus: list[bytes] = []
    if corpus_dir is not None and corpus_dir.is_dir():
        corpus = [p.read_bytes() for p in sorted(corpus_dir.rglob("SKILL.md"))]

    def md(name: str, body: str, extra: str = "") -> str:
        return f"---\nname: {name}\ndescription: Does {name}. Use for {name}.\n{extra}---\n{body}"

    memory = MemorySkills(
        {
            "/a/pdf/SKILL.md": md("pdf", "Use $ARGUMENTS and $0 in ${SKILL_DIR}.\n" * 3),
            "/a/pdf/references/x.md": "reference\n",
            "/a/pdf-forms/SKILL.md": md("pdf-forms", "Forms.\n", "context: fork\n"),
            "/a/one/dup/SKILL.md": md("dup", "One.\n"),
            "/a/two/dup/SKILL.md": md("dup", "Two.\n"),
            "/a/user-only/SKILL.md": md("user-only", "U.\n", "disable-model-invocation: true\n"),
            "/a/tools/SKILL.md": md("tools", "T.\n", "allowed-tools: Read\n"),
            "/a/ns/.claude-plugin/x": "",
        }
    )
    catalog = memory.catalog()
    session = Session(catalog, reader=memory, session_id="fuzz")
    search = sqlite3.connect(":memory:", check_same_thread=False)
    tools = SkillTools(session, search_connection=search)
    skill = Skill(name="s", description="d", path="/base/SKILL.md", dir="/base",
                  arguments=("file", "mode", "file_name"))  # fmt: skip
    return Context(corpus=corpus, documented=documented_codes(), tools=tools, catalog=catalog,
                   skill=skill)  # fmt: skip


def input_rng(seed: int, target: str, index: int) -> random.Random:
    return random.Random(seed * 1_000_003 + TARGETS.index(target) * 7_919 + index * 104_729)


# ------------------------------------------------------------------ workers


@dataclass
class Finding:
    kind: str
    """crash, hang or break."""
    index: int
    detail: str


@dataclass
class Tally:
    inputs: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)


def worker(target: str, seed: int, corpus: str | None, hang: float, jobs: Any, results: Any,
           current: Any) -> None:  # fmt: skip
    """Run chunks `(start, stop)` from `jobs`. Each finding is sent on `results` at
    once (a later crash of the process must not lose it), then `("done", inputs,
    seconds)` per chunk; `current` holds the input being run."""
    ctx = make_context(Path(corpus) if corpus else None)
    run = RUNNERS[target]
    while True:
        chunk = jobs.get()
        if chunk is None:
            return
        start, stop = chunk
        began = time.perf_counter()
        for index in range(start, stop):
            current.value = index
            r = input_rng(seed, target, index)
            t0 = time.perf_counter()
            try:
                run(r, ctx)
            except Break as exc:
                results.put(("finding", Finding("break", index, str(exc))))
            except Exception as exc:  # noqa: BLE001 - every unexpected error is a crash
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                results.put(("finding", Finding("crash", index, detail[:500])))
            elapsed = time.perf_counter() - t0
            if elapsed > hang:
                results.put(("finding", Finding("hang", index, f"{elapsed:.2f} s")))
        current.value = -1
        results.put(("done", stop - start, time.perf_counter() - began))


@dataclass
class _Slot:
    """One worker process as the parent watches it."""

    process: Any
    jobs: Any
    results: Any
    current: Any
    chunk: tuple[int, int] | None = None
    seen: int = -1
    since: float = 0.0


def fuzz_target(target: str, n: int, *, seed: int, jobs: int, corpus: Path | None, hang: float,
                kill_after: float) -> Tally:  # fmt: skip
    """Run inputs 0..n-1 of `target` on `jobs` workers; restart a worker that dies or
    stops answering (recording a crash or a hang at the input it was on)."""
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    total = Tally()
    pending = [(i, min(i + CHUNK, n)) for i in range(0, n, CHUNK)]
    began = time.perf_counter()
    slots: list[_Slot] = []

    def assign(slot: _Slot) -> None:
        slot.chunk = pending.pop(0) if pending else None
        slot.seen, slot.since = -1, time.monotonic()
        if slot.chunk is not None:
            slot.jobs.put(slot.chunk)

    def start_worker() -> _Slot:
        slot = _Slot(process=None, jobs=ctx.Queue(), results=ctx.Queue(),
                     current=ctx.Value("q", -1, lock=False))  # fmt: skip
        slot.process = ctx.Process(
            target=worker,
            args=(
                target,
                seed,
                str(corpus) if corpus else None,
                hang,
                slot.jobs,
                slot.results,
                slot.current,
            ),  # fmt: skip
            daemon=True,
        )
        slot.process.start()
        slots.append(slot)
        assign(slot)
        return slot

    for _ in range(min(jobs, len(pending))):
        start_worker()
    while any(slot.chunk is not None for slot in slots):
        for slot in list(slots):
            if slot.chunk is None:
                continue
            try:
                message = slot.results.get(timeout=0.05)
            except Exception:  # noqa: BLE001 - queue.Empty: still working
                index = slot.current.value
                if index != slot.seen:
                    slot.seen, slot.since = index, time.monotonic()
                dead = not slot.process.is_alive()
                if not dead and time.monotonic() - slot.since <= kill_after:
                    continue
                while not slot.results.empty():  # findings sent before it died
                    late = slot.results.get()
                    if late[0] == "finding":
                        total.findings.append(late[1])
                slot.process.kill()
                slot.process.join()
                index = max(index, slot.chunk[0])
                detail = f"worker exit code {slot.process.exitcode}" if dead else "killed"
                total.findings.append(Finding("crash" if dead else "hang", index, detail))
                total.inputs += index - slot.chunk[0] + 1
                if index + 1 < slot.chunk[1]:
                    pending.insert(0, (index + 1, slot.chunk[1]))
                slots.remove(slot)
                if pending:
                    start_worker()
                continue
            if message[0] == "finding":
                total.findings.append(message[1])
            else:
                total.inputs += message[1]
                assign(slot)
    for slot in slots:
        slot.jobs.put(None)
        slot.process.join(timeout=5)
        if slot.process.is_alive():
            slot.process.kill()
    total.seconds = time.perf_counter() - began
    total.findings.sort(key=lambda f: f.index)
    return total


def replay(target: str, index: int, *, seed: int, corpus: Path | None) -> int:
    ctx = make_context(corpus)
    r = input_rng(seed, target, index)
    RUNNERS[target](r, ctx)
    print(f"{target} input {index} (seed {seed}): no finding")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=20_000, help="inputs per target (20000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", action="append", choices=TARGETS, help="repeatable")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--hang", type=float, default=1.0, help="seconds an input may take (1)")
    parser.add_argument(
        "--kill-after",
        type=float,
        default=20.0,
        help="seconds without progress before a worker is killed (20)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="SKILL.md files to mutate (default: ../shared/corpus/real-skills)",
    )
    parser.add_argument("--replay", type=int, default=None, help="run one input of --target")
    parser.add_argument("--json", action="store_true", help="print JSON results")
    options = parser.parse_args(argv)
    # No home, config or cache of the person running this is ever touched.
    home = tempfile.mkdtemp(prefix="skillpack-fuzz-")
    for variable in ("SKILLPACK_HOME", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[variable] = home
    os.environ["SKILLPACK_CACHE_DIR"] = os.path.join(home, "cache")
    corpus = options.corpus if options.corpus and options.corpus.is_dir() else None
    targets = options.target or list(TARGETS)
    if options.replay is not None:
        if len(targets) != 1:
            parser.error("--replay needs exactly one --target")
        return replay(targets[0], options.replay, seed=options.seed, corpus=corpus)
    if corpus is None:
        print("no corpus to mutate: parse inputs are random and generated only", file=sys.stderr)
    rows = []
    results: dict[str, Any] = {}
    for target in targets:
        tally = fuzz_target(
            target,
            options.inputs,
            seed=options.seed,
            jobs=options.jobs,
            corpus=corpus,
            hang=options.hang,
            kill_after=options.kill_after,
        )
        rate = tally.inputs / tally.seconds if tally.seconds else 0.0
        counts = {kind: tally.count(kind) for kind in ("crash", "hang", "break")}
        rows.append((target, tally.inputs, f"{rate:,.0f}", counts["crash"], counts["hang"],
                     counts["break"]))  # fmt: skip
        results[target] = {"inputs": tally.inputs, "seconds": round(tally.seconds, 2),
                           "per_second": round(rate), **counts,
                           "findings": [f.__dict__ for f in tally.findings[:20]]}  # fmt: skip
        print(f"{target}: {tally.inputs} inputs, {rate:,.0f}/s, {counts}", file=sys.stderr)
    if options.json:
        print(json.dumps({"seed": options.seed, "targets": results}, indent=2))
    else:
        total = sum(row[1] for row in rows)
        rows.append(("total", total, "", *(sum(row[i] for row in rows) for i in (3, 4, 5))))  # type: ignore[misc]
        headers = ("target", "inputs", "inputs/s", "crashes", "hangs", "invariant breaks")
        widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
        for row in (headers, *rows):
            print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                            for i, (c, w) in enumerate(zip(row, widths, strict=True))))  # fmt: skip
        for target, data in results.items():
            for finding in data["findings"]:
                print(f"{target} #{finding['index']} {finding['kind']}: {finding['detail']}")
                print(f"  replay: python bench/fuzz.py --target {target} --seed {options.seed} "
                      f"--replay {finding['index']}")  # fmt: skip
    failed = any(data["crash"] or data["hang"] or data["break"] for data in results.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
