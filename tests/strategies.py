"""Hypothesis strategies shared by the property tests (`test_*_properties.py`).

Text shaped like what strangers and models write: frontmatter, messages with
mentions and code, skill bodies with placeholders, tool arguments.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KEYS = st.sampled_from(
    ["name", "description", "metadata", "allowed-tools", "on", "y", "No", "a_b", "x-", "k"]
)
INTS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(0, 10**600).map(str),  # past the integer text limit
    st.integers(0, 2**64).map(lambda n: f"0x{n:x}"),
    st.integers(0, 2**64).map(lambda n: f"0o{n:o}"),
    st.integers(0, 999).map(lambda n: f"{n}_000"),
    st.lists(st.integers(0, 59), min_size=2, max_size=6).map(
        lambda parts: ":".join(str(p) for p in parts)
    ),
)
WORDS = st.sampled_from(
    ["Use this", "C#", "x:y", "x: y", "#c", " #c", "1.5", "1.0.0", "2024-01-02", "2024-13-45",
     "true", "Yes", "null", "~", "'q'", '"d"', '"a\\"b"', "''", "é", "[a]", "{a: 1}", "&x a",
     "*x", "!t a", "- a", "a,b", "a  b", "a---b", "|", ">", "\t", "NaN", ".inf", "1e3", "<<"]
)  # fmt: skip
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=20)
SCALARS = st.one_of(INTS, WORDS, TEXT)


@st.composite
def frontmatter_like(draw: st.DrawFn) -> str:
    """Lines shaped like frontmatter: values, block scalars, lists, one-level maps."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        key = draw(KEYS)
        shape = draw(st.sampled_from(["value", "block", "list", "map", "noise"]))
        if shape == "value":
            lines.append(f"{key}: {draw(SCALARS)}")
        elif shape == "block":
            lines.append(f"{key}: {draw(st.sampled_from(['>', '>-', '|', '|-', '>+']))}")
            indent = " " * draw(st.sampled_from([1, 2, 4]))
            lines += [indent + draw(SCALARS) for _ in range(draw(st.integers(0, 3)))]
        elif shape == "list":
            lines.append(f"{key}:")
            lines += [f"  - {draw(SCALARS)}" for _ in range(draw(st.integers(0, 3)))]
        elif shape == "map":
            lines.append(f"{key}:")
            lines += [f"  {draw(KEYS)}: {draw(SCALARS)}" for _ in range(draw(st.integers(0, 3)))]
        else:
            lines.append(draw(st.sampled_from(["# c", "", "  ", "#", "---", "..."])))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


MESSAGE_PIECES = st.sampled_from(
    ["$pdf", "$pdf-forms", "$ns:pdf", "$PATH", "$5", "$5k", "$x$", "$$pdf", "[$pdf](a/SKILL.md)",
     "[$pdf](https://x)", "`$pdf`", "```\n$pdf\n```", "~~~", "``", "`", "/pdf ", "/help", " ",
     "\n", "\n\n", "(", "'", "“", "é", "$3d-model", "$nope", "$dup", "\\$pdf", "$ARGUMENTS", ":",
     "\t", "$a:b:c", "[", "](", "<", ">"]
)  # fmt: skip


@st.composite
def messages(draw: st.DrawFn) -> str:
    """User or model text with mentions, links, code fences, spans and slashes."""
    pieces = draw(st.lists(st.one_of(MESSAGE_PIECES, TEXT), max_size=25))
    return "".join(pieces)


BODY_PIECES = st.sampled_from(
    ["$ARGUMENTS", "$ARGUMENTS[0]", "$ARGUMENTS[12]", "$0", "$1", "$9", "${SKILL_DIR}",
     "${CLAUDE_SKILL_DIR}", "${SESSION_ID}", "${FOO}", "$file", "${file}", "\\$ARGUMENTS",
     "\\$0", "$", "\\", "text ", "\n", "```", "$file_name", "$ARGUMENTSX", "$10"]
)  # fmt: skip
ARG_PIECES = st.sampled_from(
    ["a", "b c", "'q r'", '"d e"', '"x\\"y"', "\\ ", "'", '"', "\\", "\t", "\n", " ", "$1",
     "$ARGUMENTS", "é", "\u00a0"]
)  # fmt: skip


@st.composite
def bodies(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.one_of(BODY_PIECES, TEXT), max_size=20)))


@st.composite
def arguments(draw: st.DrawFn) -> str:
    return "".join(draw(st.lists(st.one_of(ARG_PIECES, TEXT), max_size=12)))


JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=30),
        st.sampled_from(["pdf", "dup", "user-only", "/a/pdf/SKILL.md", "references/x.md"]),
    ),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(TEXT, children)),
    max_leaves=8,
)
