"""Properties of the YAML readers (hypothesis): the fast path equals the loader or
gives up, and nothing a stranger writes makes either raise what they do not promise."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st
from test_fastyaml import typed

from skillpack.parse._fastyaml import load_simple
from skillpack.parse._json_safe import TooLarge
from skillpack.parse._yaml import (
    _yaml_loader,
    check_nesting,
    load_with_libyaml,
    load_yaml,
    yaml_errors,
)
from strategies import TEXT, frontmatter_like


def assert_fast_path_agrees(text: str) -> None:
    fast_plain: dict[str, str] = {}
    fast = load_simple(text, fast_plain)  # never raises: its contract is "equal, or None"
    if fast is None:
        return
    plain: dict[str, str] = {}
    assert typed(fast) == typed(load_with_libyaml(text, plain))
    assert typed(fast) == typed(yaml.load(text, Loader=_yaml_loader()))
    assert fast_plain == plain


@given(frontmatter_like())
def test_fast_path_equals_the_loader_or_gives_up_on_frontmatter_shapes(text: str) -> None:
    assert_fast_path_agrees(text)


@given(st.text(alphabet=st.sampled_from("ab1: -#'\"\n\t[]{}>|&*!%@`,.~\\\u0085\u2028é0x_"),
               max_size=60))  # fmt: skip
def test_fast_path_equals_the_loader_or_gives_up_on_yaml_punctuation(text: str) -> None:
    assert_fast_path_agrees(text)


@given(st.one_of(frontmatter_like(), TEXT))
def test_the_loader_raises_only_what_it_promises(text: str) -> None:
    try:
        load_yaml(text)
    except TooLarge:
        pass
    except yaml_errors():
        pass


def nested(levels: int, shape: str) -> str:
    """YAML whose collections nest exactly `levels` deep (the top mapping counts)."""
    inner = levels - 1
    if shape == "flow":
        return "x: " + "[" * inner + "1" + "]" * inner
    if shape == "flow-map":
        return "x: " + "{a: " * inner + "1" + "}" * inner
    if shape == "block":
        return "x:\n" + "- " * inner + "a" if inner else "x: a"
    return "".join(" " * i + f"k{i}:\n" for i in range(levels)) + " " * levels + "v"


@given(
    st.one_of(st.integers(60, 70), st.integers(1, 300)),
    st.sampled_from(["flow", "flow-map", "block", "indented"]),
)
def test_nesting_is_refused_exactly_past_the_limit(levels: int, shape: str) -> None:
    text = nested(levels, shape)
    try:
        check_nesting(text)
        refused = False
    except TooLarge:
        refused = True
    assert refused == (levels > 64)
    if not refused:
        assert load_yaml(text) is not None
