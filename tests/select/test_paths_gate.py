"""`paths:` globs against noted paths (relative to the project root): the activation gate."""

from __future__ import annotations

import pytest

from skillpack.select._paths_gate import glob_pattern, paths_match

CASES = [
    ("*.py", "app.py", True),
    ("*.py", "src/deep/app.py", True),
    ("*.py", "app.pyc", False),
    ("src/**/*.ts", "src/a/b/c.ts", True),
    ("src/**/*.ts", "src/c.ts", True),
    ("src/**/*.ts", "lib/src/c.ts", False),
    ("/src/*.ts", "src/c.ts", True),
    ("./src/*.ts", "src/c.ts", True),
    ("src/*.ts", "src/a/c.ts", False),
    ("*.{ts,tsx}", "web/app.tsx", True),
    ("*.{ts,tsx}", "web/app.js", False),
    ("docs/", "docs/guide/intro.md", True),
    ("docs", "docs/guide/intro.md", True),
    ("docs", "other/docs", True),
    ("file?.md", "file1.md", True),
    ("file?.md", "file12.md", False),
    ("[ab].md", "b.md", True),
    ("[!ab].md", "b.md", False),
    ("**/migrations/*.sql", "db/migrations/001.sql", True),
    ("**", "anything/at/all", True),
]


@pytest.mark.parametrize(("glob", "path", "expected"), CASES)
def test_a_glob_matches_as_gitignore_patterns_do(glob: str, path: str, expected: bool) -> None:
    assert paths_match([glob], [path]) is expected


def test_any_glob_against_any_path_opens_and_empty_globs_never_do() -> None:
    assert paths_match(["*.rs", "*.py"], ["README.md", "x/y.py"])
    assert not paths_match(["", "  "], ["x.py"])
    assert glob_pattern("/") is None
    assert not paths_match([], ["x.py"])


def test_an_unclosed_class_or_brace_is_taken_literally() -> None:
    assert paths_match(["a[b.md"], ["a[b.md"])
    assert paths_match(["a{b.md"], ["a{b.md"])
