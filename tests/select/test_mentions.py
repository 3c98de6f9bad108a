"""The mention scanner: what counts as `$name`, links, code regions, slash commands."""

from __future__ import annotations

import pytest

from skillpack.select._mentions import (
    Mention,
    code_regions,
    find_mentions,
    parse_slash,
    remove_spans,
)

# (text, expected [(id, source)]) — one row per rule of the scanner.
MENTION_CASES = [
    # where a mention may start
    ("start-of-text", "$foo", [("foo", "mention")]),
    ("after-space", "do $foo now", [("foo", "mention")]),
    ("after-tab-and-newline", "a\t$foo\n$bar", [("foo", "mention"), ("bar", "mention")]),
    ("after-paren", "($foo)", [("foo", "mention")]),
    ("after-bracket", "[$foo]", [("foo", "mention")]),
    ("after-brace", "{$foo}", [("foo", "mention")]),
    ("after-double-quote", '"$foo"', [("foo", "mention")]),
    ("after-single-quote", "'$foo'", [("foo", "mention")]),
    ("after-emphasis", "**$foo**", [("foo", "mention")]),
    ("after-letter", "x$foo", []),
    ("after-accented-letter", "é$foo", []),
    ("after-digit", "US$5 and 1$foo", []),
    ("after-backslash-escape", r"\$foo", []),
    ("after-slash-in-url", "https://x.y/$foo", []),
    ("after-equals", "a=$foo", []),
    ("after-cjk-letter", "使用$foo", []),
    ("after-cjk-then-space", "使用 $foo", [("foo", "mention")]),
    ("after-ideographic-space", "使用\u3000$foo", [("foo", "mention")]),
    ("after-cjk-corner-bracket", "「$foo」", [("foo", "mention")]),
    ("after-typographic-quote", "“$foo”", [("foo", "mention")]),
    ("after-nbsp", "use\u00a0$foo", [("foo", "mention")]),
    # where the id ends
    ("period-after", "$foo.", [("foo", "mention")]),
    ("comma-after", "$foo, then", [("foo", "mention")]),
    ("ellipsis-after", "$foo…", [("foo", "mention")]),
    ("cjk-after", "$foo使用", [("foo", "mention")]),
    ("ideographic-full-stop-after", "$foo。", [("foo", "mention")]),
    ("colon-then-space", "$foo: do X", [("foo", "mention")]),
    ("colon-at-end", "$foo:", [("foo", "mention")]),
    ("namespaced", "$ns:foo", [("ns:foo", "mention")]),
    ("two-namespaces", "$a:b:c", [("a:b:c", "mention")]),
    ("hyphen-and-underscore", "$foo-bar_baz", [("foo-bar_baz", "mention")]),
    ("near-miss-kept-whole", "$foo-barx", [("foo-barx", "mention")]),
    ("mixed-case", "$Foo", [("Foo", "mention")]),
    ("digit-led-name", "$3d-modeling", [("3d-modeling", "mention")]),
    # env-var look-alikes and placeholders: no lowercase letter
    ("env-path", "echo $PATH", []),
    ("env-home-slash", "cd $HOME/bin", []),
    ("env-xdg", "$XDG_CONFIG_HOME", []),
    ("env-letter-digit", "$A1", []),
    ("env-colon", "$PATH: is wrong", []),
    ("placeholder-arguments", "$ARGUMENTS", []),
    ("placeholder-indexed", "$ARGUMENTS[0]", []),
    ("placeholder-positional", "$1 and $0", []),
    ("underscore-only", "$_ and $-", []),
    ("brace-expansion", "${SKILL_DIR}/x", []),
    # amounts
    ("amount-integer", "costs $5", []),
    ("amount-thousands", "$1,000", []),
    ("amount-decimal", "$9.99.", []),
    ("amount-kilo", "$5k budget", []),
    ("amount-million", "$10m", []),
    ("amount-billion", "$2bn", []),
    ("amount-upper-suffix", "$5K", []),
    ("amount-then-colon", "$5k: the budget", []),
    ("amount-like-namespace", "$5k:plan", [("5k:plan", "mention")]),
    ("amount-like-name", "$5k-plan", [("5k-plan", "mention")]),
    # several dollars
    ("double-dollar", "$$foo", []),
    ("triple-dollar", "$$$foo", []),
    ("dollars-alone", "$$ $", []),
    ("tex-math", "$x$ and $y$", []),
    ("shell-concatenation", "$a$b", []),
    # fenced code blocks
    ("backtick-fence", "```\n$foo\n```\n$bar", [("bar", "mention")]),
    ("tilde-fence", "~~~\n$foo\n~~~\n$bar", [("bar", "mention")]),
    ("fence-info-string", "```sh title=x\necho $foo\n```\n$bar", [("bar", "mention")]),
    ("indented-fence", "- step\n    ```\n    $foo\n    ```\n$bar", [("bar", "mention")]),
    ("unclosed-fence", "$bar\n```\n$foo\nstill code", [("bar", "mention")]),
    ("longer-closing-fence", "```\n$foo\n`````\n$bar", [("bar", "mention")]),
    ("shorter-run-does-not-close", "````\n```\n$foo\n````\n$bar", [("bar", "mention")]),
    ("other-fence-char-does-not-close", "~~~\n```\n$foo\n```\n$a\n~~~\n$bar", [("bar", "mention")]),
    ("closing-fence-with-text-does-not-close", "```\n$a\n``` x\n$b\n```\n$c", [("c", "mention")]),
    ("backtick-info-with-backtick-is-no-fence", "``` `x\n$foo", [("foo", "mention")]),
    ("crlf-fence", "```\r\n$foo\r\n```\r\n$bar", [("bar", "mention")]),
    # indented code blocks
    ("indented-block-at-start", "    $foo", []),
    (
        "indented-shell-loop",
        'Run it:\n\n    for f in *; do\n      $deploy "$f"\n    done\n\nthen $bar',
        [("bar", "mention")],
    ),
    ("indented-block-with-blank-lines", "x\n\n    a\n\n    $foo\n$bar", [("bar", "mention")]),
    ("tab-indented-block", "x\n\n\t$foo\n\n$bar", [("bar", "mention")]),
    ("indent-without-blank-line-continues-text", "x\n    $foo", [("foo", "mention")]),
    ("list-continuation-is-not-code", "- step\n\n    use $foo", [("foo", "mention")]),
    ("numbered-list-continuation", "1. step\n\n    use $foo", [("foo", "mention")]),
    ("after-a-list-ends", "- a\n\ntext\n\n    $foo", []),
    # inline code spans
    ("inline-span", "`$foo` $bar", [("bar", "mention")]),
    ("double-backtick-span", "``$foo ` x`` $bar", [("bar", "mention")]),
    ("triple-backtick-inline", "a ```$foo``` $bar", [("bar", "mention")]),
    ("unmatched-backtick-is-literal", "`unclosed $foo", [("foo", "mention")]),
    ("span-across-lines", "`a\n$foo` $bar", [("bar", "mention")]),
    ("span-stops-at-blank-line", "`a\n\n$foo`", [("foo", "mention")]),
    ("dollar-right-after-span", "`a`$foo", []),
    # links
    ("link-to-skill-md", "[$foo](a/SKILL.md)", [("foo", "link")]),
    ("link-to-folder", "see [$foo](../skills/foo) now", [("foo", "link")]),
    ("link-angle-target", "[$foo](<my skills/foo/SKILL.md>)", [("foo", "link")]),
    ("link-glued-to-word", "x[$foo](a/SKILL.md)", [("foo", "link")]),
    ("link-to-web-page-is-a-name", "[$foo](https://example.com/foo)", [("foo", "mention")]),
    ("brackets-without-target", "[$foo] (x)", [("foo", "mention")]),
    ("link-in-inline-code", "`[$foo](a/SKILL.md)` $bar", [("bar", "mention")]),
    ("link-in-fence", "```\n[$foo](a/SKILL.md)\n```", []),
    # order
    (
        "text-order",
        "$b then [$a](x/SKILL.md) then $c",
        [("b", "mention"), ("a", "link"), ("c", "mention")],
    ),
    ("no-dollar", "plain text", []),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=case_id) for case_id, text, expected in MENTION_CASES],
)
def test_find_mentions_follows_the_scanner_rules(
    text: str, expected: list[tuple[str, str]]
) -> None:
    assert [(m.id, m.source) for m in find_mentions(text)] == expected


def test_a_mention_records_its_token_and_span() -> None:
    text = "please run ($pdf-forms), thanks"
    (mention,) = find_mentions(text)
    assert mention == Mention(
        token="$pdf-forms", id="pdf-forms", source="mention", start=12, end=22
    )
    assert text[mention.start : mention.end] == mention.token


def test_a_link_records_the_whole_link_and_its_target() -> None:
    text = "use [$x](<a b/SKILL.md>) please"
    (mention,) = find_mentions(text)
    assert mention.token == "[$x](<a b/SKILL.md>)"
    assert mention.link == "a b/SKILL.md"
    assert text[mention.start : mention.end] == mention.token


def test_a_web_link_keeps_no_link_target() -> None:
    (mention,) = find_mentions("[$foo](https://example.com)")
    assert mention.link is None
    assert mention.token == "[$foo](https://example.com)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a `b` c", [(2, 5)], id="one-span"),
        pytest.param("```\nx\n```\nafter", [(0, 9)], id="fence-covers-its-lines"),
        pytest.param("x\n```\ncode", [(2, 10)], id="unclosed-fence-to-end"),
        pytest.param("`a` ``b`` `c", [(0, 3), (4, 9)], id="unmatched-last-run"),
        pytest.param("no code", [], id="none"),
    ],
)
def test_code_regions_cover_fences_and_spans(text: str, expected: list[tuple[int, int]]) -> None:
    assert code_regions(text) == expected


SLASH_CASES = [
    ("bare-command", "/foo", ("foo", "")),
    ("with-args", "/foo bar baz", ("foo", "bar baz")),
    ("leading-whitespace", "  /foo\targ", ("foo", "arg")),
    ("args-span-lines", "/foo first\nsecond line\n", ("foo", "first\nsecond line")),
    ("newline-right-after-name", "/foo\nbody", ("foo", "body")),
    ("namespaced", "/ns:foo x", ("ns:foo", "x")),
    ("hyphenated", "/pdf-forms", ("pdf-forms", "")),
    ("absolute-path", "/usr/bin/env python", None),
    ("relative-looking-path", "/path/to/file", None),
    ("not-at-start", "run /foo", None),
    ("punctuation-after-name", "/foo.", None),
    ("double-slash", "//foo", None),
    ("slash-alone", "/", None),
    ("trailing-colon", "/foo: x", None),
    ("dollar-mention", "$foo", None),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=case_id) for case_id, text, expected in SLASH_CASES],
)
def test_parse_slash_reads_a_leading_command(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_slash(text) == expected


@pytest.mark.parametrize(
    ("text", "tokens", "expected"),
    [
        pytest.param("$a fix it", ["$a"], "fix it", id="leading-token"),
        pytest.param("fix $a it", ["$a"], "fix it", id="middle-token-one-space"),
        pytest.param("a $x $y b", ["$x", "$y"], "a b", id="adjacent-tokens"),
        pytest.param("fix it with $a.", ["$a"], "fix it with.", id="no-space-before-period"),
        pytest.param("fix ($a) it", ["$a"], "fix it", id="wrapping-parens"),
        pytest.param("fix “$a” it", ["$a"], "fix it", id="wrapping-typographic-quotes"),
        pytest.param("fix ($a it", ["$a"], "fix ( it", id="unbalanced-paren-stays"),
        pytest.param("$a: do X", ["$a"], "do X", id="colon-after-leading-token"),
        pytest.param("  $a, do X", ["$a"], "do X", id="comma-after-indented-token"),
        pytest.param("say $a: hi", ["$a"], "say: hi", id="colon-mid-line-stays"),
        pytest.param("one\n$a\ntwo", ["$a"], "one\ntwo", id="token-on-own-line"),
        pytest.param("one\n\n$a\n\ntwo", ["$a"], "one\n\ntwo", id="token-as-paragraph"),
        pytest.param("one\r\n$a\r\ntwo", ["$a"], "one\r\ntwo", id="token-line-crlf"),
        pytest.param("keep  double  spaces $a", ["$a"], "keep  double  spaces", id="rest-verbatim"),
    ],
)
def test_remove_spans_cuts_tokens_and_tidies_the_cut(
    text: str, tokens: list[str], expected: str
) -> None:
    spans: list[tuple[int, int]] = []
    for token in tokens:
        start = text.index(token, spans[-1][1] if spans else 0)
        spans.append((start, start + len(token)))
    assert remove_spans(text, spans) == expected
