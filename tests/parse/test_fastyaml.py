"""The YAML subset reader gives exactly the loader's result (libyaml's syntax, YAML 1.2
core-schema scalars, the same plain-scalar texts), or gives up."""

from __future__ import annotations

import random
from typing import Any

import pytest

from conftest import REAL_SKILLS
from skillpack.parse._fastyaml import load_simple
from skillpack.parse._frontmatter import split_frontmatter
from skillpack.parse._yaml import load_with_libyaml, yaml_errors


def typed(value: Any) -> Any:
    """The value with every scalar's type spelled out (True == 1 must not pass)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, value)


def assert_same_as_yaml(text: str) -> bool:
    """True when the subset accepted `text`; then its result, and the plain-scalar texts
    it reports, must equal the loader's."""
    fast_plain: dict[str, str] = {}
    fast = load_simple(text, fast_plain)
    if fast is None:
        assert fast_plain == {}, text
        return False
    plain: dict[str, str] = {}
    try:
        expected = load_with_libyaml(text, plain)
    except yaml_errors():
        pytest.fail(f"the subset accepted text libyaml refuses: {text!r}")
    assert typed(fast) == typed(expected), text
    assert fast_plain == plain, text
    return True


ACCEPTED = [
    pytest.param("name: my-skill\ndescription: Does things.", id="plain"),
    pytest.param('description: "Use when: asked # not a comment"', id="double-quoted"),
    pytest.param("description: 'It is \"quoted\"'", id="single-quoted"),
    pytest.param('description: ""', id="empty-quoted"),
    pytest.param("description: Use [this] {x}, y & z * w ! v", id="flow-chars-mid-plain"),
    pytest.param("description: C# and https://x.y/z", id="hash-and-colon-without-space"),
    pytest.param("description: a  b   ", id="inner-and-trailing-blanks"),
    pytest.param("description: a---b", id="triple-dash-inside"),
    pytest.param("description: >-\n  one\n  two", id="folded-strip"),
    pytest.param("description: >\n  one\n  two", id="folded-clip-at-end"),
    pytest.param("description: >\n  one\n  two\nname: x", id="folded-clip-then-key"),
    pytest.param("description: |\n  one\n  # two\nname: x", id="literal-with-hash-line"),
    pytest.param("description: |-\n    deep\n    lines", id="literal-strip-deeper-indent"),
    pytest.param("metadata:\n  author: me\n  version: 2\n  ratio: 1.5", id="nested-mapping"),
    pytest.param("allowed-tools:\n  - Read\n  - 'Bash(ls *)'", id="nested-list"),
    pytest.param("k: 0\nj: 10\nf: 01.5\nv: 1.0.0", id="numbers"),
    pytest.param("a: true\nb: No\nc: OFF\nd: null\ne: yes", id="bools-and-null"),
    pytest.param("name: off\nversion: 1.10\nx: TRUE\ny: 'no'\nz: Null", id="yaml-1-2-words"),
    pytest.param("on: push\nyes: x\nOff: y", id="yaml-1-1-bool-words-are-text-keys"),
    pytest.param("a: 1\na: 'q'", id="repeated-key-quoted-last"),
    pytest.param("a: 'q'\na: 1", id="repeated-key-plain-last"),
    pytest.param("a:\nb: x", id="empty-value-is-null"),
    pytest.param("# comment\nname: x\n\ndescription: y\n", id="comments-and-blank-lines"),
    pytest.param("name: x\nname: y", id="duplicate-key-last-wins"),
    pytest.param("y: 1\nn: 2", id="y-and-n-are-keys"),
    pytest.param("d: NaN Infinity", id="letter-words-stay-text"),
    pytest.param("d: café ☕ 日本", id="non-ascii"),
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_subset_is_read_exactly_as_libyaml_reads_it(text: str) -> None:
    assert assert_same_as_yaml(text)


GIVES_UP = [
    pytest.param("", id="empty-is-null-not-a-mapping"),
    pytest.param("# only a comment", id="comment-only"),
    pytest.param("description: a # comment", id="trailing-comment"),
    pytest.param("description: Use when: x", id="colon-space"),
    pytest.param("description: ends with:", id="trailing-colon"),
    pytest.param('description: "esc \\" aped"', id="escaped-quote"),
    pytest.param("description: 'it''s'", id="doubled-single-quote"),
    pytest.param('description: "unclosed', id="unclosed-quote"),
    pytest.param("description: plain\n  continued", id="multi-line-plain"),
    pytest.param("description: >\n  a\n\n  b", id="blank-line-in-block"),
    pytest.param("description: >\n  a\n    b", id="more-indented-line"),
    pytest.param("description: >+\n  a", id="keep-chomping"),
    pytest.param("description: >\nname: x", id="empty-block-scalar"),
    pytest.param("description: |\n  trailing  ", id="trailing-space-in-block"),
    pytest.param("d: 2024-01-02", id="date"),
    pytest.param("d: 1e3", id="exponent"),
    pytest.param("d: 00", id="leading-zero-int"),
    pytest.param("d: 1_000", id="underscore-int"),
    pytest.param("d: .inf", id="infinity"),
    pytest.param("d: ~", id="tilde-null"),
    pytest.param("d: -1", id="negative"),
    pytest.param("d: [a, b]", id="flow-list"),
    pytest.param("d: {a: b}", id="flow-mapping"),
    pytest.param("d: &a x\ne: *a", id="anchor-alias"),
    pytest.param("d: !!str 1", id="tag"),
    pytest.param("d: @x", id="reserved-indicator"),
    pytest.param("d:\ttab", id="tab-separator"),
    pytest.param("d: a\tb", id="tab-in-value"),
    pytest.param("d: a\u2028b", id="unicode-line-separator"),
    pytest.param("d: x\r", id="carriage-return"),
    pytest.param("true: push", id="bool-key"),
    pytest.param("null: x", id="null-key"),
    pytest.param("1: x", id="number-key"),
    pytest.param("a.b: x", id="dotted-key"),
    pytest.param('"quoted": x', id="quoted-key"),
    pytest.param("key:value", id="no-space-after-colon"),
    pytest.param("- a\n- b", id="top-level-list"),
    pytest.param("just text", id="scalar-document"),
    pytest.param("  name: x", id="indented-top-level"),
    pytest.param("m:\n  a:\n    b: c", id="deeper-nesting"),
    pytest.param("m:\n  - a: b", id="list-of-mappings"),
    pytest.param("m:\n  - a\n  b: c", id="mixed-block"),
    pytest.param("m:\n  -", id="empty-list-item"),
    pytest.param("m:\n- a\n- b", id="zero-indented-list"),
    pytest.param("m:\n  a: 1\n\n  b: 2", id="blank-line-in-mapping"),
]


@pytest.mark.parametrize("text", GIVES_UP)
def test_anything_outside_the_subset_is_left_to_libyaml(text: str) -> None:
    assert load_simple(text) is None


@pytest.mark.corpus
def test_real_corpus_frontmatter_reads_the_same_and_mostly_in_the_subset() -> None:
    accepted = total = 0
    for path in sorted(REAL_SKILLS.rglob("SKILL.md")):
        frontmatter = split_frontmatter(path.read_text(encoding="utf-8")).frontmatter
        if frontmatter is None:
            continue
        total += 1
        accepted += assert_same_as_yaml(frontmatter)
    assert (accepted, total) == (356, 397)


PIECES = [
    "a", "Z", "x y", "0", "7", "12", "1.5", "1.0.0", "01", "true", "No", "null", "~",
    ":", ": ", " #", "#", "-", "- ", "'", '"', "\\", "[", "]", "{", "}", ",", "&", "*",
    "!", "|", ">", ">-", "|-", "%", "@", "`", "?", " ", "  ", "\t", "\n", "\n  ", "\n  - ",
    "\n\n", "é", "2024-01-02", ".inf", "yes", "k: ", "on",
]  # fmt: skip


def test_random_texts_built_from_tricky_pieces_never_disagree_with_libyaml() -> None:
    rng = random.Random(20240611)
    accepted = 0
    for _ in range(4000):
        body = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        text = rng.choice(["k: ", "k:", "k:\n  ", "k: >-\n  ", "k:\n  - ", ""]) + body
        accepted += assert_same_as_yaml(text)
    # The generator must exercise the accepting side too, or this test proves nothing.
    assert accepted > 300


KEYS = ["name", "description", "allowed-tools", "metadata", "on", "y", "No", "a_b", "x-", "_x"]
ATOMS = [
    "a", "Use this", "C#", "x:y", "x: y", "#c", " #c", "1", "0", "00", "1.5", "1.0.0",
    "2024-01-02", "true", "Yes", "null", "~", "'q'", '"d"', '"a\\"b"', "''", '""', "é",
    "[a]", "{a: 1}", "&x a", "*x", "!t a", "- a", "a,b", "a  b", "http://x", "a---b", "|",
    ">", "\t", "a ", "'a' #c", "NaN", ".5", "5.", "+1", "-1", "0x1F", "1e3", "1_0", "12:30",
]  # fmt: skip


def _frontmatter_like(rng: random.Random) -> str:
    def value() -> str:
        return "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 3)))

    lines: list[str] = []
    for _ in range(rng.randint(1, 5)):
        key, kind = rng.choice(KEYS), rng.random()
        if kind < 0.5:
            lines.append(f"{key}: {value()}")
        elif kind < 0.65:
            lines.append(f"{key}: {rng.choice(['>', '>-', '|', '|-', '>+', '|2'])}")
            indent = " " * rng.choice([1, 2, 4])
            for _ in range(rng.randint(0, 3)):
                extra = rng.choice(["", " "])
                lines.append(indent + extra + value() if rng.random() < 0.9 else "")
        elif kind < 0.8:
            lines.append(f"{key}:")
            lines += [f"  - {value()}" for _ in range(rng.randint(0, 3))]
        elif kind < 0.95:
            lines.append(f"{key}:")
            lines += [f"  {rng.choice(KEYS)}: {value()}" for _ in range(rng.randint(0, 3))]
        else:
            lines.append(rng.choice(["# c", "", "  ", "#"]))
    return "\n".join(lines) + rng.choice(["", "\n", "\n\n"])


def test_random_frontmatter_shaped_texts_never_disagree_with_libyaml() -> None:
    rng = random.Random(7)
    accepted = 0
    for _ in range(3000):
        text = _frontmatter_like(rng)
        accepted += assert_same_as_yaml(text)
    assert accepted > 150
