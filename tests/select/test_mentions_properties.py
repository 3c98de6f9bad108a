"""Properties of mention scanning and resolution (hypothesis): any message gives
tokens that are exactly the text they span, a bounded list of diagnostics, and never
an exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillpack._limits import MAX_DIAGNOSTICS
from skillpack.discovery._memory import MemorySkills
from skillpack.select._mentions import find_mentions, parse_slash, remove_spans
from skillpack.select._resolve import resolve_message
from strategies import messages


def skill_md(name: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: Does {name}.\n{extra}---\nBody.\n"


CATALOG = MemorySkills(
    {
        "/a/pdf/SKILL.md": skill_md("pdf"),
        "/a/pdf-forms/SKILL.md": skill_md("pdf-forms"),
        "/a/one/dup/SKILL.md": skill_md("dup"),
        "/a/two/dup/SKILL.md": skill_md("dup"),
        "/a/user-only/SKILL.md": skill_md("user-only", "disable-model-invocation: true\n"),
        "/a/tools/SKILL.md": skill_md("tools", "allowed-tools: Read\n"),
    }
).catalog()


@given(messages())
def test_mentions_are_exactly_the_text_they_span(text: str) -> None:
    previous_end = 0
    for mention in find_mentions(text):
        assert text[mention.start : mention.end] == mention.token
        assert mention.start >= previous_end
        assert mention.id in mention.token
        previous_end = mention.end


@given(messages(), st.sampled_from(["user", "model"]), st.sampled_from(["choose-one", "all"]))
def test_any_message_resolves_with_bounded_diagnostics(text: str, invoker: str, multi: str) -> None:
    resolution = resolve_message(
        text,
        CATALOG,
        invoker=invoker,  # type: ignore[arg-type]
        multi_mention=multi,  # type: ignore[arg-type]
        base_dir="/a",
    )
    assert len(resolution.diagnostics) <= MAX_DIAGNOSTICS + 2  # + choose-one, + too-many
    assert len(resolution.lines) == len(resolution.activations)
    keys = [a.skill.key for a in resolution.activations]
    assert len(keys) == len(set(keys))
    if not resolution.activations:
        assert resolution.text in (text, (parse_slash(text) or ("", ""))[1])


@given(messages())
def test_removing_every_mention_leaves_no_mention_token(text: str) -> None:
    mentions = find_mentions(text)
    remaining = remove_spans(text, [(m.start, m.end) for m in mentions])
    assert len(remaining) <= len(text)
