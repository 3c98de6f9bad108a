"""Helpers shared by the benchmark scripts in bench/ (timing, stats, tables, corpora).

Benchmarks are scripts, not tests: they run `skillpack` and reference programs as
whole processes, time them with `time.perf_counter`, and print a table (or JSON).
Each script puts bench/ on `sys.path` by being run as `python bench/<script>.py`,
so `import _common` works without packaging.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import gen_corpus

BENCH_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True, kw_only=True, slots=True)
class Stats:
    """Summary of repeated wall-time samples, in seconds."""

    samples: tuple[float, ...]
    """Every measurement, in the order taken."""
    median: float
    min: float
    max: float
    p99: float
    """99th percentile (nearest-rank); equals `max` below 100 samples."""

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        """Summarize `samples` (at least one)."""
        if not samples:
            raise ValueError("Stats.of needs at least one sample")
        return cls(
            samples=tuple(samples),
            median=statistics.median(samples),
            min=min(samples),
            max=max(samples),
            p99=percentile(samples, 99),
        )

    def to_dict(self, scale: float = 1000.0) -> dict[str, Any]:
        """JSON-ready values, in milliseconds by default (`scale` multiplies seconds)."""
        return {
            "median": round(self.median * scale, 3),
            "min": round(self.min * scale, 3),
            "max": round(self.max * scale, 3),
            "p99": round(self.p99 * scale, 3),
            "samples": [round(s * scale, 3) for s in self.samples],
        }


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile `q` (0-100] of `samples`."""
    if not samples:
        raise ValueError("percentile needs at least one sample")
    ordered = sorted(samples)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[min(int(rank), len(ordered)) - 1]


@dataclass(frozen=True, kw_only=True, slots=True)
class RunResult:
    """One timed process run."""

    seconds: float
    """Wall time, spawn to exit."""
    cpu_seconds: float
    """User + system CPU time of the process (and its children): robust to a busy machine."""
    stdout: str
    """Captured stdout, or "" when it went to a file or /dev/null."""
    stderr: str


class CommandFailed(RuntimeError):
    """A benchmarked command exited non-zero: the numbers would be meaningless."""


def run_timed(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | Path,
    stdout: IO[Any] | int | None = subprocess.DEVNULL,
) -> RunResult:
    """Run `argv` once and time the whole process (spawn to exit) with perf_counter.

    Also reports the child's CPU time (from `getrusage(RUSAGE_CHILDREN)`), which a
    busy machine inflates far less than wall time. `stdout` defaults to /dev/null
    so output formatting is paid but terminal I/O is not; pass `subprocess.PIPE`
    to capture it. Raises `CommandFailed` on a non-zero exit, with the command and
    its stderr.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        list(argv), env=dict(env), cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, check=False
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    out = proc.stdout.decode("utf-8", "replace") if isinstance(proc.stdout, bytes) else ""
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise CommandFailed(
            f"`{' '.join(argv)}` exited with {proc.returncode}; stderr:\n{err[-2000:]}"
        )
    return RunResult(seconds=seconds, cpu_seconds=cpu, stdout=out, stderr=err)


@dataclass(frozen=True, kw_only=True, slots=True)
class Timing:
    """Wall and CPU statistics of repeated runs of one command."""

    wall: Stats
    cpu: Stats

    @classmethod
    def of(cls, runs: Sequence[RunResult]) -> Timing:
        """Summarize `runs` (at least one)."""
        return cls(
            wall=Stats.of([r.seconds for r in runs]), cpu=Stats.of([r.cpu_seconds for r in runs])
        )


def repeat_timed(
    repeat: int,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | Path,
    before_each: Callable[[], None] | None = None,
) -> Timing:
    """`run_timed` `repeat` times (output to /dev/null); `before_each` runs untimed."""
    runs = []
    for _ in range(repeat):
        if before_each is not None:
            before_each()
        runs.append(run_timed(argv, env=env, cwd=cwd))
    return Timing.of(runs)


def isolated_env(base: Path, **overrides: str) -> dict[str, str]:
    """The current environment with every user-level path moved under `base`.

    A benchmark must never read or write the real home: HOME, SKILLPACK_HOME, the
    XDG dirs, the admin dir and the cache dir all point into `base` (created).

    Bytecode is cached under `base/pycache` even when the caller's environment sets
    PYTHONDONTWRITEBYTECODE: installed packages (yaml, click) ship compiled, so an
    editable skillpack recompiled on every run would be timed for its compiler
    use, not its work. The prefix keeps `.pyc` files out of the source tree.
    """
    base.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        HOME=str(base / "home"),
        SKILLPACK_HOME=str(base / "home"),
        XDG_CONFIG_HOME=str(base / "home" / ".config"),
        XDG_CACHE_HOME=str(base / "home" / ".cache"),
        SKILLPACK_ADMIN_DIR=str(base / "admin-skills"),
        SKILLPACK_CACHE_DIR=str(base / "cache"),
    )
    env.pop("SKILLS_PROMPT_CHAR_BUDGET", None)
    env.pop("CODEX_HOME", None)
    env.pop("SLASH_COMMAND_TOOL_CHAR_BUDGET", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    env.update(overrides)
    return env


@contextmanager
def work_dir(path: Path | None) -> Iterator[Path]:
    """`path` (created, kept) when given, else a temp dir removed on exit."""
    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
        yield path.resolve()
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="skillpack-bench-") as tmp:
        yield Path(tmp)


@dataclass(frozen=True, kw_only=True, slots=True)
class Corpus:
    """A corpus on disk and what a correct discoverer should find in it."""

    dir: Path
    roots: tuple[Path, ...]
    """Absolute discovery roots (pass each as `--root`)."""
    summary: Mapping[str, Any]
    """The generator's summary (`corpus.json`), or `{}` for a foreign corpus."""

    @property
    def expected_listed(self) -> int | None:
        """Skills a correct discoverer lists, when the generator recorded it."""
        value = self.summary.get("expected_listed")
        return value if isinstance(value, int) else None


def load_corpus(path: Path) -> Corpus:
    """A generated corpus (with `corpus.json`), or any directory used as one root."""
    path = path.resolve()
    if not path.is_dir():
        raise FileNotFoundError(f"corpus directory {path} does not exist")
    summary_file = path / gen_corpus.SUMMARY_FILE
    if not summary_file.is_file():
        return Corpus(dir=path, roots=(path,), summary={})
    summary = json.loads(summary_file.read_text(encoding="utf-8"))
    return Corpus(dir=path, roots=tuple(path / r for r in summary["roots"]), summary=summary)


def ensure_corpus(base: Path, n_skills: int, *, seed: int = 0, per_root: int = 1000) -> Corpus:
    """The generated corpus for these parameters under `base`, generating it if needed.

    Corpora are cached by name (`skills-<n>-seed<seed>-per<per_root>`) and reused
    when their summary records the current generator version, so several benches
    (or repeated runs with `--work-dir`) share one copy.
    """
    target = base / f"skills-{n_skills}-seed{seed}-per{per_root}"
    summary_file = target / gen_corpus.SUMMARY_FILE
    if summary_file.is_file():
        summary = json.loads(summary_file.read_text(encoding="utf-8"))
        if summary.get("generator_version") == gen_corpus.GENERATOR_VERSION:
            return load_corpus(target)
    if target.exists():
        shutil.rmtree(target)
    gen_corpus.generate(target, n_skills, seed, per_root=per_root)
    return load_corpus(target)


def skillpack_command() -> list[str]:
    """The `skillpack` console script beside this interpreter (the venv's), else on PATH."""
    beside = Path(sys.executable).parent / "skillpack"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("skillpack")
    if found is None:
        raise FileNotFoundError(
            "no `skillpack` command found; install the package (pip install -e .) "
            "or pass --skillpack"
        )
    return [found]


def import_time_us(module: str, *, python: str, env: Mapping[str, str], cwd: str | Path) -> int:
    """Cumulative microseconds of importing `module`, from `python -X importtime`."""
    proc = subprocess.run(
        [python, "-X", "importtime", "-c", f"import {module}"],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if proc.returncode != 0:
        raise CommandFailed(f"`import {module}` failed:\n{proc.stderr[-2000:]}")
    for line in proc.stderr.splitlines():
        # "import time:  self [us] | cumulative | imported package"
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            return int(parts[1].strip())
    raise CommandFailed(f"no importtime line for {module!r} in:\n{proc.stderr[-2000:]}")


def machine_info() -> dict[str, Any]:
    """Where and when the numbers were taken."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def ms(seconds: float) -> str:
    """Seconds as a short millisecond string (`123.4 ms`)."""
    return f"{seconds * 1000:.1f} ms"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table; numbers right-aligned, everything else left-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [
        all(_looks_numeric(row[i]) for row in cells[1:]) if rows else False
        for i in range(len(headers))
    ]
    lines = []
    for r, row in enumerate(cells):
        padded = [
            cell.rjust(widths[i]) if numeric[i] and r else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(padded).rstrip())
        if r == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _looks_numeric(cell: str) -> bool:
    head = cell.split(" ")[0].rstrip("x%")
    try:
        float(head)
    except ValueError:
        return cell in ("", "-")
    return True


def timed(func: Callable[[], Any], runs: int) -> Stats:
    """`func` timed `runs` times in-process (after one untimed warm-up run)."""
    func()  # warm-up: caches, lazily built indexes
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return Stats.of(samples)
