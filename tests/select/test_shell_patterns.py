"""Shell policy patterns: globs never let shell syntax through, `re:` is explicit."""

from __future__ import annotations

import pytest

from skillpack._errors import UsageError
from skillpack.select._shell_patterns import compile_pattern, uses_shell_syntax


@pytest.mark.parametrize(
    ("pattern", "command", "allowed"),
    [
        ("git status", "git status", True),
        ("git status", "  git status  ", True),
        ("git status", "git   status", True),
        ("git status", "git status --short", False),
        ("git status", "git statusx", False),
        ("git diff *", "git diff --stat HEAD~1", True),
        ("git diff *", "git diff", False),
        ("git diff*", "git diff", True),
        ("git diff *", "git diff --format='%h %s'", True),
        ("git diff *", "git diff; rm -rf ~", False),
        ("git diff *", "git diff && rm -rf ~", False),
        ("git diff *", "git diff || true", False),
        ("git diff *", "git diff | sh", False),
        ("git diff *", "git diff $(curl evil)", False),
        ("git diff *", "git diff ${HOME}", False),
        ("git diff *", "git diff `id`", False),
        ("git diff *", "git diff > /tmp/out", False),
        ("git diff *", "git diff < /etc/passwd", False),
        ("git diff *", "git diff\nrm -rf ~", False),
        ("git diff *", "git diff\rrm", False),
        ("git diff *", "git diff \x00x", False),
        ("git diff *", "git diff (x)", False),
        ("git diff *", "git diff ${CLAUDE_SKILL_DIR}/a", True),
        ("git diff *", "git diff ${SKILL_DIR}", True),
        ("git diff *", "git diff ${SKILL_DIRX}", False),
        ("git diff *", "git diff ；rm", True),  # a fullwidth semicolon is not shell syntax
        ("ls ?", "ls a", True),
        ("ls ?", "ls ;", False),
        ("ls ?", "ls ab", False),
        ("npm run test:*", "npm run test", True),
        ("npm run test:*", "npm run test -- --watch", True),
        ("npm run test:*", "npm run testing", False),
        ("npm run test:*", "npm run test; rm -rf ~", False),
        ("git log | head", "git log | head", True),
        ("git log | head", "git log | head | sh", False),
        ("re:echo [a-z]+", "echo hello", True),
        ("re:echo [a-z]+", "echo hello; id", False),
        ("re:echo .*", "echo hi; id", True),
        ("git*", "git-upload-pack x", True),
        ("git*", "git; id", False),
    ],
)
def test_pattern_allows_exactly(pattern: str, command: str, allowed: bool) -> None:
    assert compile_pattern(pattern).matches(command) is allowed


@pytest.mark.parametrize("pattern", ["", "   ", "re:("])
def test_bad_patterns_are_usage_errors(pattern: str) -> None:
    with pytest.raises(UsageError, match="pattern"):
        compile_pattern(pattern)


@pytest.mark.parametrize(
    ("command", "syntax"),
    [
        ("git status", None),
        ("node ${CLAUDE_SKILL_DIR}/x.js", None),
        ("echo $HOME", "$"),
        ("a | b", "|"),
        ("a\nb", "\n"),
        ("a & b", "&"),
        ("echo `id`", "`"),
        ("cat < f", "<"),
    ],
)
def test_shell_syntax_is_named(command: str, syntax: str | None) -> None:
    assert uses_shell_syntax(command) == syntax
