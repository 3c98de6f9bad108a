"""The tuning / held-out split of the search requests, drawn once and stored.

    python eval/search_split.py [--requests FILE] [--split FILE] [--seed N]

The suggestion requests use the same script: `--requests eval/suggest_requests.toml
--split eval/suggest_split.toml` (seed 38, drawn once).

Each request is known by an id: the first 12 hex digits of the SHA-256 of its
query text. `search_split.toml` lists the ids of each half, with the query as a
comment. Run without an existing split file, the script draws the split: the
requests that some skill fits and those no skill fits are each shuffled with
`random.Random(seed)` and cut in two, so both halves hold their share of no-fit
requests. Run again, it never moves a request: requests added since (new ids) are
drawn into a half each by the same seed, one at a time, and ids no request has
any more are dropped. `--check` only verifies that every request has a half.

Tune on `tune` only. `held_out` is the number that counts: look at its totals,
never at its requests one by one.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_REQUESTS = HERE / "search_requests.toml"
DEFAULT_SPLIT = HERE / "search_split.toml"
SEED = 14
"""The split's seed (the issue's number); stored in the split file too."""
HALVES = ("tune", "held_out")


def request_id(query: str) -> str:
    """A request's stable id: its query text's SHA-256, first 12 hex digits."""
    return hashlib.sha256(query.encode("utf-8")).hexdigest()[:12]


def load_split(path: Path = DEFAULT_SPLIT) -> dict[str, str]:
    """Request id -> "tune" | "held_out", as stored in `path`."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    halves: dict[str, str] = {}
    for half in HALVES:
        for rid in data.get(half, {}).get("ids", []):
            if rid in halves:
                raise SystemExit(f"{path}: id {rid} is in both halves")
            halves[rid] = half
    return halves


def draw(
    requests: Sequence[tuple[str, bool]], *, seed: int, existing: Mapping[str, str]
) -> dict[str, str]:
    """Assign each `(query, fits)` request a half; `existing` assignments are kept.

    New requests are drawn per kind (fit / no-fit): shuffled with `seed` and cut
    so that each half ends up as close to half of that kind as the kept ones allow.
    """
    out: dict[str, str] = {}
    for fits in (True, False):
        ids = [request_id(q) for q, f in requests if f is fits]
        kept = [rid for rid in ids if rid in existing]
        new = sorted(rid for rid in ids if rid not in existing)
        random.Random(f"{seed}:{fits}").shuffle(new)
        tune_count = sum(1 for rid in kept if existing[rid] == "tune")
        for rid in kept:
            out[rid] = existing[rid]
        want_tune = max(0, (len(ids) + 1) // 2 - tune_count)
        for index, rid in enumerate(new):
            out[rid] = "tune" if index < want_tune else "held_out"
    return out


def write_split(
    path: Path,
    split: Mapping[str, str],
    queries: Mapping[str, str],
    seed: int,
    requests: str = DEFAULT_REQUESTS.name,
) -> None:
    lines = [
        f"# The tuning / held-out split of {requests}, drawn once by",
        f"# `python eval/search_split.py` (seed {seed}) and never redrawn: a request",
        "# keeps its half for good. Ids are the first 12 hex digits of the SHA-256 of",
        "# the query text (an edited request is a new request). Tune on `tune` only.",
        "",
        f"seed = {seed}",
    ]
    for half in HALVES:
        ids = sorted(rid for rid, h in split.items() if h == half)
        lines += ["", f"[{half}]", f"# {len(ids)} requests", "ids = ["]
        for rid in ids:
            text = " ".join(queries[rid].split())
            lines.append(f'  "{rid}",  # {text[:90]}')
        lines.append("]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_queries(path: Path) -> list[tuple[str, bool]]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return [(item["query"], bool(item.get("expect"))) for item in data["request"]]


def unassigned(ids: Iterable[str], split: Mapping[str, str]) -> list[str]:
    return [rid for rid in ids if rid not in split]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=Path, default=DEFAULT_REQUESTS)
    parser.add_argument("--split", type=Path, default=DEFAULT_SPLIT)
    parser.add_argument("--seed", type=int, default=None, help=f"only for a new split ({SEED})")
    parser.add_argument("--check", action="store_true", help="verify, write nothing")
    args = parser.parse_args(argv)
    requests = load_queries(args.requests)
    queries = {request_id(q): q for q, _fits in requests}
    if len(queries) != len(requests):
        raise SystemExit(f"{args.requests}: two requests have the same query text")
    existing: dict[str, str] = {}
    seed = SEED if args.seed is None else args.seed
    if args.split.exists():
        existing = load_split(args.split)
        with args.split.open("rb") as handle:
            stored_seed = tomllib.load(handle).get("seed", SEED)
        if args.seed is not None and args.seed != stored_seed:
            raise SystemExit(f"{args.split} was drawn with seed {stored_seed}; it is never redrawn")
        seed = stored_seed
    missing = unassigned(queries, existing)
    if args.check:
        if missing:
            print(f"{len(missing)} requests have no half; run python eval/search_split.py")
            return 1
        print(f"{len(queries)} requests, every one in a half")
        return 0
    split = draw(requests, seed=seed, existing=existing)
    write_split(args.split, split, queries, seed, args.requests.name)
    counts = {half: sum(1 for h in split.values() if h == half) for half in HALVES}
    print(
        f"{args.split}: {counts['tune']} tune, {counts['held_out']} held out "
        f"({len(missing)} newly drawn)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
