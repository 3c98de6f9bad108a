"""The description lint: which descriptions make a skill hard for an agent to pick."""

from __future__ import annotations

import pytest

from skillpack._model import Skill
from skillpack.select._lint import SHORT_WORDS, lint_description

GOOD = (
    "Fill in and flatten PDF forms from a JSON file of field values. Use when the user "
    "asks to complete, sign or batch-fill PDF forms."
)


def skill(description: str, when_to_use: str | None = None) -> Skill:
    return Skill(
        name="s",
        description=description,
        path="/r/s/SKILL.md",
        dir="/r/s",
        when_to_use=when_to_use,
    )


@pytest.mark.parametrize(
    ("description", "when_to_use", "codes"),
    [
        (GOOD, None, []),
        ("PDF tools.", None, ["description-short", "description-no-when"]),
        ("Fill PDF forms. Use when asked.", None, ["description-short"]),
        (
            "Fill in and flatten PDF forms from a JSON file of field values, page by page.",
            None,
            ["description-no-when"],
        ),
        (
            "Fill in and flatten PDF forms from a JSON file of field values, page by page.",
            "The user has a PDF form to complete.",
            [],
        ),
        (GOOD + " Handles various other things, etc.", None, ["description-vague"]),
        (GOOD + " " + "x" * 1024, None, ["description-too-long"]),
        (
            "A comprehensive helper for anything",
            None,
            ["description-short", "description-no-when", "description-vague"],
        ),
    ],
    ids=["good", "short", "short-with-when", "no-when", "when-field", "vague", "long", "all"],
)
def test_findings_per_description(
    description: str, when_to_use: str | None, codes: list[str]
) -> None:
    found = lint_description(skill(description, when_to_use))

    assert [f.code for f in found] == codes
    assert all(f.message.endswith(".") for f in found)


@pytest.mark.parametrize(
    "sentence",
    [
        "Use when the user asks for a chart.",
        "Use this skill for charts.",
        "Use it to draw charts.",
        "Invoke for chart requests.",
        "If the user wants a chart, start here.",
    ],
)
def test_a_sentence_that_says_when_is_recognised(sentence: str) -> None:
    text = "Draw bar, line and pie charts from CSV data with matplotlib. " + sentence

    assert "description-no-when" not in [f.code for f in lint_description(skill(text))]


def test_vague_words_are_named_once_each_in_order() -> None:
    [finding] = [
        f
        for f in lint_description(skill(GOOD + " Useful for stuff, more stuff and things."))
        if f.code == "description-vague"
    ]

    assert finding.words == ("useful", "stuff", "things")
    assert finding.to_dict()["words"] == ["useful", "stuff", "things"]


def test_a_description_of_exactly_the_short_limit_is_not_short() -> None:
    text = " ".join(["word"] * SHORT_WORDS) + " Use when needed."

    assert "description-short" not in [f.code for f in lint_description(skill(text))]
