"""Frontmatter as a YAML 1.2 (core schema) parser reads it: what the MCP listing carries.

The expected values are the YAML 1.2.2 specification's (core schema, section 10.3.2);
hosts compare them with their own YAML 1.2 reading of the served file.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import REAL_SKILLS
from skillpack.parse._frontmatter import split_frontmatter
from skillpack.parse._yaml12 import Yaml12Error, frontmatter_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Booleans: only true/false (three spellings each).
        (
            "a: yes\nb: No\nc: on\nd: OFF\ne: y",
            {"a": "yes", "b": "No", "c": "on", "d": "OFF", "e": "y"},
        ),
        ("a: true\nb: True\nc: FALSE\nd: tRue", {"a": True, "b": True, "c": False, "d": "tRue"}),
        # Null.
        (
            "a: ~\nb: null\nc: NULL\nd:\ne: nil",
            {"a": None, "b": None, "c": None, "d": None, "e": "nil"},
        ),
        # Integers: decimal (leading zeros too), 0o octal, 0x hex; nothing else.
        ("a: 017\nb: 0o17\nc: 0x1F\nd: +12\ne: -3", {"a": 17, "b": 15, "c": 31, "d": 12, "e": -3}),
        (
            "a: 1_000\nb: 1:20\nc: 0b11\nd: 0O17",
            {"a": "1_000", "b": "1:20", "c": "0b11", "d": "0O17"},
        ),
        # Floats.
        (
            "a: 1.5\nb: 1.\nc: .5\nd: 1e3\ne: -2.5E-1",
            {"a": 1.5, "b": 1.0, "c": 0.5, "d": 1000.0, "e": -0.25},
        ),
        # Timestamps are text.
        (
            "a: 2024-01-02\nb: 2024-01-02T10:00:00Z",
            {"a": "2024-01-02", "b": "2024-01-02T10:00:00Z"},
        ),
        # Merge keys are plain keys; explicit !!str stays text; keys become text.
        ("<<: {b: 1}\nc: !!str 12", {"<<": {"b": 1}, "c": "12"}),
        ("1: x\ntrue: y\n~: z", {"1": "x", "true": "y", "": "z"}),
        # Quoted and block scalars are text, as written.
        ("a: 'yes'\nb: \"017\"\nc: |\n  x\n  y\n", {"a": "yes", "b": "017", "c": "x\ny\n"}),
        ("a: &v [1, on]\nb: *v", {"a": [1, "on"], "b": [1, "on"]}),
        ("", {}),
    ],
)
def test_plain_scalars_are_typed_by_the_yaml_1_2_core_schema(
    text: str, expected: dict[str, Any]
) -> None:
    assert frontmatter_json(text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a: 1\na: 2", "twice"),
        ("a: .inf", "finite"),
        ("a: -.Inf", "finite"),
        ("a: .nan", "finite"),
        ("a: !!int '12'", "tag"),
        ("a: !!float 1", "tag"),
        ("a: !!timestamp 2024-01-02", "tag"),
        ("a: !!binary aGk=", "tag"),
        ("a: ! 12", "non-specific"),
        ("[a, b]: x", "key"),
        ("1.5: x", "key"),
        ("a: x\u2028y", r"U\+2028"),
        ("a: x\x85y", r"U\+0085"),
        ("- a\n- b", "mapping"),
        ("a: b: c", "YAML"),
        ("a: [" * 70 + "]" * 70, "nests"),
        ("a: &x y\n" + "".join(f"k{i}: *x\n" for i in range(101)), "aliases"),
    ],
)
def test_what_two_readers_could_read_differently_is_refused(text: str, why: str) -> None:
    with pytest.raises(Yaml12Error, match=why):
        frontmatter_json(text)


@pytest.mark.corpus
def test_every_frontmatter_of_the_real_corpus_has_a_yaml_1_2_reading() -> None:
    """Each real frontmatter has a YAML 1.2 reading: a mapping with a description (the
    Inspector test checks the values against the JavaScript `yaml` package's)."""
    count = 0
    for path in sorted(REAL_SKILLS.rglob("SKILL.md")):
        split = split_frontmatter(path.read_bytes().decode("utf-8-sig"))
        if split.frontmatter is None:
            continue
        value = frontmatter_json(split.frontmatter)
        assert isinstance(value, dict)
        assert "description" in value, path
        count += 1
    assert count > 390


def test_the_reader_uses_libyaml_when_pyyaml_has_it() -> None:
    import yaml

    from skillpack.parse._yaml12 import _loader

    if not yaml.__with_libyaml__:
        pytest.skip("this PyYAML was built without libyaml")
    from yaml._yaml import CParser

    assert issubclass(_loader(), CParser)  # 10x faster than PyYAML's own scanner
