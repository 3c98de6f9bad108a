"""Try ranking variants quickly: a pure-Python BM25 family over the eval's skills.

    python eval/search_lab.py [--variant NAME ...] [--list]

A re-implementation of the lexical ranker, not the ranker: the same words (the
search's stop words, FTS5's own Porter stems), BM25 as FTS5 computes it (the
frequencies of a table's columns weighted and added, one length normalization over
the row), the frontmatter and the body in two tables whose scores add up. It scores
the shipped configuration at recall@1 0.705 / recall@5 0.864 / MRR 0.771 on the
tuning half, the real ranker 0.688 / 0.864 / 0.763: compare variants with each
other, then confirm a winner through `search_eval.py`. It prints the tuning half
only (tune on nothing else). The second round's experiments in `README.md` that
say "re-implementation" ran on this.
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import search_eval  # noqa: E402 - eval/search_eval.py

from skillpack.index._fts import TOKENIZER  # noqa: E402
from skillpack.select._words import STOP_WORDS, WORD, folded  # noqa: E402

Text = Callable[[dict[str, str]], str]


@dataclass(frozen=True, kw_only=True, slots=True)
class Field:
    name: str
    text: Text
    weight: float
    b: float = 0.75


@dataclass(frozen=True, kw_only=True, slots=True)
class Table:
    fields: tuple[Field, ...]
    per_field: bool = False
    """False: FTS5's BM25 (weighted frequencies, one length); True: BM25F (each
    field's frequency normalized by its own length before weighting)."""
    weight: float = 1.0


class Stems:
    """Porter stems as FTS5's tokenizer makes them."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(t, tokenize = '{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(s, instance)")
        self._stems: dict[str, str] = {}

    def add(self, words: set[str]) -> None:
        new = sorted(words - self._stems.keys())
        self._conn.execute("DELETE FROM s")
        self._conn.executemany("INSERT INTO s(rowid, t) VALUES (?, ?)", enumerate(new, 1))
        found: dict[int, str] = {}
        for doc, term in self._conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
            found.setdefault(doc, term)
        self._stems.update((word, found.get(i, word)) for i, word in enumerate(new, 1))

    def __getitem__(self, word: str) -> str:
        if word not in self._stems:
            self.add({word})
        return self._stems[word]


def words(text: str) -> list[str]:
    return WORD.findall(folded(text))


class Lab:
    def __init__(self) -> None:
        requests = search_eval.load_requests(search_eval.DEFAULT_REQUESTS)
        self.tune = [r for r in requests if r.half == "tune"]
        corpus = search_eval.DEFAULT_CORPUS
        catalog = search_eval.load_corpus(corpus)
        self.skills = [
            {
                "path": search_eval.relpath(s, corpus),
                "name": s.name.replace("-", " "),
                "description": s.description,
                "when_to_use": s.when_to_use or "",
                "body": search_eval.read_body(s),
            }
            for s in catalog.skills
            if s.model_invocable
        ]
        self.stems = Stems()
        vocabulary = {w for r in self.tune for w in words(r.query)}
        for skill in self.skills:
            vocabulary.update(w for text in skill.values() for w in words(text))
        self.stems.add(vocabulary)

    def query_terms(self, query: str, stop: frozenset[str] = STOP_WORDS) -> list[str]:
        terms = (self.stems[w] for w in words(query) if len(w) > 1 and w not in stop)
        return list(dict.fromkeys(terms))

    def index(self, tables: Sequence[Table]) -> Callable[[list[str]], list[float]]:
        """A scorer: query terms -> a BM25 score per skill (the tables' sum)."""
        n = len(self.skills)
        built = []
        for table in tables:
            postings: dict[str, dict[int, list[int]]] = {}
            lengths = [[0] * n for _ in table.fields]
            for doc, skill in enumerate(self.skills):
                for i, f in enumerate(table.fields):
                    tokens = words(f.text(skill))
                    lengths[i][doc] = len(tokens)
                    for token in tokens:
                        counts = postings.setdefault(self.stems[token], {})
                        counts.setdefault(doc, [0] * len(table.fields))[i] += 1
            average = [max(sum(column) / n, 1e-9) for column in lengths]
            rows = [sum(column[doc] for column in lengths) for doc in range(n)]
            built.append((table, postings, lengths, average, rows, max(sum(rows) / n, 1e-9)))

        def score(terms: list[str], k1: float = 1.2) -> list[float]:
            scores = [0.0] * n
            for table, postings, lengths, average, rows, row_average in built:
                for term in terms:
                    found = postings.get(term, {})
                    idf = max(math.log((n - len(found) + 0.5) / (len(found) + 0.5)), 1e-6)
                    for doc, tf in found.items():
                        fields = table.fields
                        if table.per_field:
                            f = sum(
                                w.weight * tf[i] / (1 - w.b + w.b * lengths[i][doc] / avg)
                                for i, (w, avg) in enumerate(zip(fields, average, strict=True))
                                if tf[i]
                            )
                            norm = 1.0
                        else:
                            f = sum(tf[i] * field.weight for i, field in enumerate(fields))
                            norm = 1 - fields[0].b + fields[0].b * rows[doc] / row_average
                        scores[doc] += table.weight * idf * f * (k1 + 1) / (f + k1 * norm)
            return scores

        return score

    def measure(self, rank: Callable[[str], list[int]]) -> tuple[float, float, float]:
        """recall@1, recall@5, MRR (top 10) over the tuning half's answerable requests."""
        ranks = []
        for request in self.tune:
            if request.expect:
                top = rank(request.query)[:10]
                paths = [self.skills[d]["path"] for d in top]
                ranks.append(next((i + 1 for i, p in enumerate(paths) if p in request.expect), 0))
        fit = len(ranks)
        return (
            sum(1 for r in ranks if r == 1) / fit,
            sum(1 for r in ranks if 1 <= r <= 5) / fit,
            sum(1 / r for r in ranks if r) / fit,
        )

    def ranker(self, tables: Sequence[Table]) -> Callable[[str], list[int]]:
        score = self.index(tables)

        def rank(query: str) -> list[int]:
            scores = score(self.query_terms(query))
            ranked = sorted(range(len(scores)), key=lambda d: -scores[d])
            return [d for d in ranked[:10] if scores[d] > 0]

        return rank


def _head(per_field: bool = False, name: float = 10, description: float = 5) -> Table:
    return Table(
        fields=(
            Field(name="name", text=lambda s: s["name"], weight=name),
            Field(name="description", text=lambda s: s["description"], weight=description),
            Field(name="when_to_use", text=lambda s: s["when_to_use"], weight=description * 0.8),
        ),
        per_field=per_field,
    )


def _body(start: int = 0, stop: int | None = 2500, weight: float = 1.0, b: float = 0.75) -> Table:
    def text(skill: dict[str, str]) -> str:
        return skill["body"][start:stop]

    return Table(fields=(Field(name="body", text=text, weight=1.0, b=b),), weight=weight)


def _headings(skill: dict[str, str]) -> str:
    out, fenced = [], False
    for line in skill["body"].splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.append(line.lstrip("#"))
    return "\n".join(out)


def _folders(skill: dict[str, str]) -> str:
    generic = {"skills", "plugins", "external_plugins", "scientific-skills", "composio-skills"}
    return " ".join(p for p in skill["path"].split("/")[1:-2] if p not in generic)


VARIANTS: dict[str, list[Table]] = {
    "shipped": [_head(), _body()],
    "bm25f-one-table": [
        Table(
            fields=(*_head(name=3, description=2).fields, _body(weight=0.5).fields[0]),
            per_field=True,
        )
    ],
    "bm25f-two-tables": [_head(per_field=True, name=1, description=1), _body()],
    "body-1000": [_head(), _body(stop=1000)],
    "body-10000": [_head(), _body(stop=10000, b=0.9)],
    "body-all": [_head(), _body(stop=None, b=0.9)],
    "body-rest-0.3": [_head(), _body(), _body(start=2500, stop=None, weight=0.3)],
    "headings": [_head(), _body(), Table(fields=(Field(name="h", text=_headings, weight=1.0),))],
    "folders": [_head(), _body(), Table(fields=(Field(name="f", text=_folders, weight=1.0),))],
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    parser.add_argument("--list", action="store_true", help="list the variants")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(VARIANTS))
        return 0
    lab = Lab()
    print(f"{'tuning half':20}{'recall@1':>10}{'recall@5':>10}{'MRR':>10}")
    for name in args.variant or VARIANTS:
        r1, r5, mrr = lab.measure(lab.ranker(VARIANTS[name]))
        print(f"{name:20}{r1:>10.3f}{r5:>10.3f}{mrr:>10.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
