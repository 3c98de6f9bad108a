"""Loading a SKILL.md: the bounded read under it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpack.discovery import _load


@pytest.mark.parametrize(
    ("length", "limit", "stated", "expected"),
    [
        (100, 1000, None, 100),
        (100, 1000, 100, 100),
        (100, 1000, 40, 100),
        (100, 1000, 400, 100),
        (100, 60, 40, 61),
        (100, 60, None, 61),
        (0, 10, 0, 0),
        (300_000, 8 * 1024 * 1024, 10, 300_000),
    ],
    ids=[
        "size-from-fstat",
        "size-as-stated",
        "grew-since-stat",
        "shrank-since-stat",
        "grew-past-the-limit",
        "over-the-limit",
        "empty",
        "grew-by-many-steps",
    ],
)
def test_read_bytes_reads_to_the_end_or_one_byte_past_the_limit(
    tmp_path: Path, length: int, limit: int, stated: int | None, expected: int
) -> None:
    path = tmp_path / "file"
    path.write_bytes(bytes(range(256)) * (length // 256) + b"z" * (length % 256))

    data = _load.read_bytes(str(path), limit, stated)

    assert data == path.read_bytes()[:expected]
