"""Archives: a corpus of malicious ones all refused, good ones read exactly, publish's tar.gz."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from collections.abc import Callable

import pytest

from skillpack.install._archive import archive_kind, make_targz, normalize_member, read_archive
from skillpack.install._values import Limits, Refused

SKILL = b"---\nname: demo\ndescription: Demo. Use when testing.\n---\nbody\n"
SMALL = Limits(max_files=20, max_unpacked_bytes=64 * 1024)


def targz(*members: tuple[tarfile.TarInfo, bytes | None], fmt: int = tarfile.USTAR_FORMAT) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue())


def member(
    name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = mode
    return info


def zipped(*entries: tuple[str, bytes, int]) -> bytes:
    """(name, data, unix mode incl. file type) per entry."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            info.external_attr = (mode & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out.getvalue()


def zip_with_duplicate() -> bytes:
    out = io.BytesIO()
    with pytest.warns(UserWarning), zipfile.ZipFile(out, "w") as archive:
        archive.writestr("SKILL.md", SKILL)
        archive.writestr("SKILL.md", b"---\nname: demo\ndescription: other\n---\n")
    return out.getvalue()


def gz_bomb() -> bytes:
    # One member that claims and holds 8 MiB of zeros (8 KiB compressed; the cap is 64 KiB).
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        archive.addfile(member("SKILL.md"), io.BytesIO(SKILL))
        big = member("assets/zeros.bin")
        big.size = 8 * 1024 * 1024
        archive.addfile(big, io.BytesIO(bytes(big.size)))
    return gzip.compress(raw.getvalue(), compresslevel=9)


def pax_header_bomb() -> bytes:
    # A pax extended header of 8 MiB (tarfile reads a header whole into memory, so the
    # stream itself must be bounded).
    header = member("././@PaxHeader", tarfile.XHDTYPE)
    body = b"9999 comment=" + bytes(8 * 1024 * 1024)
    return targz((header, body), (member("SKILL.md"), SKILL))


def zip_bomb() -> bytes:
    return zipped(("SKILL.md", SKILL, 0o100644), ("zeros.bin", bytes(8 * 1024 * 1024), 0o100644))


MALICIOUS: list[tuple[str, Callable[[], bytes], str, str]] = [
    (
        "zip-slip in a tar",
        lambda: targz((member("SKILL.md"), SKILL), (member("../evil.sh"), b"x")),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "zip-slip in a zip",
        lambda: zipped(("SKILL.md", SKILL, 0o100644), ("a/../../evil.sh", b"x", 0o100644)),
        "zip",
        "unsafe-entry",
    ),
    (
        "absolute path in a tar",
        lambda: targz((member("SKILL.md"), SKILL), (member("/etc/cron.d/x"), b"x")),
        "tar.gz",
        "unsafe-entry",
    ),
    ("absolute path in a zip", lambda: zipped(("/tmp/x", b"x", 0o100644)), "zip", "unsafe-entry"),
    ("drive letter", lambda: zipped(("C:/Windows/x", b"x", 0o100644)), "zip", "unsafe-entry"),
    ("backslash traversal", lambda: zipped(("..\\evil", b"x", 0o100644)), "zip", "unsafe-entry"),
    (
        "control character",
        lambda: targz((member("SKILL.md\x1b[2J"), SKILL)),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "symlink escape in a tar",
        lambda: targz(
            (member("SKILL.md"), SKILL), (member("x", tarfile.SYMTYPE, "../../etc/passwd"), None)
        ),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "absolute symlink in a tar",
        lambda: targz(
            (member("SKILL.md"), SKILL), (member("x", tarfile.SYMTYPE, "/etc/passwd"), None)
        ),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "symlink escape in a zip",
        lambda: zipped(("SKILL.md", SKILL, 0o100644), ("x", b"../../../etc/passwd", 0o120777)),
        "zip",
        "unsafe-entry",
    ),
    (
        "hard link escape",
        lambda: targz(
            (member("SKILL.md"), SKILL), (member("x", tarfile.LNKTYPE, "../outside"), None)
        ),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "link to a folder",
        lambda: targz(
            (member("SKILL.md"), SKILL),
            (member("sub", tarfile.DIRTYPE), None),
            (member("x", tarfile.SYMTYPE, "sub"), None),
        ),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "symlink loop",
        lambda: targz(
            (member("SKILL.md"), SKILL),
            (member("a", tarfile.SYMTYPE, "b"), None),
            (member("b", tarfile.SYMTYPE, "a"), None),
        ),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "character device",
        lambda: targz((member("SKILL.md"), SKILL), (member("dev", tarfile.CHRTYPE), None)),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "block device",
        lambda: targz((member("SKILL.md"), SKILL), (member("disk", tarfile.BLKTYPE), None)),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "fifo",
        lambda: targz((member("SKILL.md"), SKILL), (member("pipe", tarfile.FIFOTYPE), None)),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "device in a zip",
        lambda: zipped(("SKILL.md", SKILL, 0o100644), ("dev", b"", 0o020644)),
        "zip",
        "unsafe-entry",
    ),
    (
        "duplicate tar entry",
        lambda: targz((member("SKILL.md"), SKILL), (member("SKILL.md"), b"x")),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "duplicate after ./",
        lambda: targz((member("SKILL.md"), SKILL), (member("./SKILL.md"), b"x")),
        "tar.gz",
        "unsafe-entry",
    ),
    (
        "duplicate by case",
        lambda: targz((member("SKILL.md"), SKILL), (member("skill.md"), b"x")),
        "tar.gz",
        "unsafe-entry",
    ),
    ("duplicate zip entry", zip_with_duplicate, "zip", "unsafe-entry"),
    (
        "too many files",
        lambda: targz(*[(member(f"f{i}.md"), b"x") for i in range(30)]),
        "tar.gz",
        "too-large",
    ),
    ("gzip bomb", gz_bomb, "tar.gz", "too-large"),
    ("pax header bomb", pax_header_bomb, "tar.gz", "too-large"),
    ("zip bomb", zip_bomb, "zip", "too-large"),
    (
        "truncated gzip",
        lambda: targz((member("SKILL.md"), SKILL))[:-20],
        "tar.gz",
        "archive-invalid",
    ),
    ("not an archive", lambda: b"<html>not found</html>", "zip", "archive-invalid"),
]


@pytest.mark.parametrize(
    ("label", "build", "kind", "code"), MALICIOUS, ids=[row[0] for row in MALICIOUS]
)
def test_every_malicious_archive_is_refused_with_its_reason(
    label: str, build: Callable[[], bytes], kind: str, code: str
) -> None:
    with pytest.raises(Refused) as caught:
        read_archive(build(), kind, limits=SMALL, label="https://example.com/x")  # type: ignore[arg-type]
    assert caught.value.code == code, caught.value.message
    assert "https://example.com/x" in caught.value.message


def test_an_encrypted_zip_entry_is_refused() -> None:
    data = bytearray(zipped(("SKILL.md", SKILL, 0o100644)))
    # Set the "encrypted" flag bit in the local header and the central directory.
    data[6] |= 1
    central = data.rfind(b"PK\x01\x02")
    data[central + 8] |= 1
    with pytest.raises(Refused) as caught:
        read_archive(bytes(data), "zip", limits=SMALL, label="x.zip")
    assert caught.value.code == "unsafe-entry"


def test_a_good_tar_is_read_with_exec_bits_links_inside_and_a_dot_slash_prefix() -> None:
    data = targz(
        (member("./", tarfile.DIRTYPE), None),
        (member("./SKILL.md"), SKILL),
        (member("./scripts/run.sh", mode=0o755), b"#!/bin/sh\n"),
        (member("./scripts/again.sh", tarfile.SYMTYPE, "run.sh"), None),
        (member("./refs/hard.sh", tarfile.LNKTYPE, "./scripts/run.sh"), None),
    )
    payload = read_archive(data, "tar.gz", limits=SMALL, label="x")
    assert payload.files == {
        "SKILL.md": SKILL,
        "scripts/run.sh": b"#!/bin/sh\n",
        "scripts/again.sh": b"#!/bin/sh\n",
        "refs/hard.sh": b"#!/bin/sh\n",
    }
    assert payload.executable == {"scripts/run.sh", "scripts/again.sh", "refs/hard.sh"}


def test_long_names_in_pax_or_ustar_prefix_form_are_read_whole() -> None:
    long = "references/" + "a" * 120 + ".md"
    for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        data = targz((member("SKILL.md"), SKILL), (member(long), b"x"), fmt=fmt)
        assert long in read_archive(data, "tar.gz", limits=SMALL, label="x").files


def test_a_zip_is_read_with_its_exec_bits() -> None:
    data = zipped(
        ("SKILL.md", SKILL, 0o100644),
        ("scripts/run.sh", b"#!/bin/sh\n", 0o100755),
        ("scripts/", b"", 0o040755),
    )
    payload = read_archive(data, "zip", limits=SMALL, label="x")
    assert set(payload.files) == {"SKILL.md", "scripts/run.sh"}
    assert payload.executable == {"scripts/run.sh"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("SKILL.md", "SKILL.md"),
        ("./a/b.md", "a/b.md"),
        ("a//b.md", "a/b.md"),
        ("./", ""),
        (".", ""),
        ("a/", "a"),
    ],
)
def test_member_paths_are_normalized(name: str, expected: str) -> None:
    assert normalize_member(name, label="x") == expected


@pytest.mark.parametrize(
    "name", ["../x", "a/../../x", "/x", "a/./b", "C:x", "a\\b", "a\x00b", "./.."]
)
def test_member_paths_that_could_escape_are_refused(name: str) -> None:
    with pytest.raises(Refused):
        normalize_member(name, label="x")


def test_make_targz_is_reproducible_ustar_without_dot_prefix_and_reads_back() -> None:
    files = {"SKILL.md": SKILL, "scripts/run.sh": b"#!/bin/sh\n", "a/b/c.md": b"c"}
    first = make_targz(files, frozenset({"scripts/run.sh"}))
    assert first == make_targz(dict(reversed(list(files.items()))), frozenset({"scripts/run.sh"}))
    assert first[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # no name, mtime 0
    with tarfile.open(fileobj=io.BytesIO(first), mode="r:gz") as archive:
        members = archive.getmembers()
        assert [m.name for m in members] == ["SKILL.md", "a/b/c.md", "scripts/run.sh"]
        assert all(m.isreg() and m.mtime == 0 and m.uid == 0 and m.uname == "" for m in members)
        assert [m.mode for m in members] == [0o644, 0o644, 0o755]
    raw = gzip.decompress(first)
    assert raw[257:263] == b"ustar\x00"
    payload = read_archive(first, "tar.gz", limits=SMALL, label="x")
    assert payload.files == files and payload.executable == {"scripts/run.sh"}


def test_make_targz_refuses_a_path_too_long_for_ustar() -> None:
    with pytest.raises(ValueError):
        make_targz({"SKILL.md": SKILL, "a/" + "b" * 120: b"x"})


@pytest.mark.parametrize(
    ("name", "data", "content_type", "expected"),
    [
        ("x.zip", b"", "", "zip"),
        ("x.tar.gz", b"", "", "tar.gz"),
        ("x.tgz?v=1", b"", "", "tar.gz"),
        ("download", b"", "application/zip", "zip"),
        ("download", b"", "application/gzip", "tar.gz"),
        ("download", b"PK\x03\x04", "", "zip"),
        ("download", b"\x1f\x8b", "", "tar.gz"),
        ("download", b"<html>", "text/html", None),
    ],
)
def test_archive_kind_uses_content_type_then_name_then_magic(
    name: str, data: bytes, content_type: str, expected: str | None
) -> None:
    assert archive_kind(name, data, content_type) == expected
