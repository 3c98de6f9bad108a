"""Archives in and out, in memory: safe reading of `.tar.gz`/`.zip`, reproducible `.tar.gz`.

Reading never touches the disk: an archive becomes a `Payload` (path -> bytes) or a
`Refused` error, so nothing can land outside a target folder. Refused: absolute
paths, drive letters, backslashes, `.`/`..` segments (a single leading `./` is
allowed), control characters, duplicate paths (also when they differ only by case or
Unicode normalization, which collide on macOS and Windows), device files, FIFOs,
links that leave the archive or point at nothing or at a folder, encrypted zip
entries, and more files or bytes than `Limits` allow. A link to a file inside the
archive becomes a copy of that file. The decompressed stream itself is bounded, so a
gzip bomb stops at the cap instead of filling memory.

Writing (`make_targz`) is reproducible: ustar, regular files only, sorted by UTF-8
path, no `./` prefix, mtime 0, owner 0/0 with empty names, mode 0644 or 0755, gzip
with no name and mtime 0 — the form the `skills` npm CLI reads.
"""

from __future__ import annotations

import io
import posixpath
import stat
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from .._paths import SEGMENT_WORDS, segment_problem
from ._values import Limits, Payload, Refused

if TYPE_CHECKING:
    import zipfile

ArchiveKind = Literal["tar.gz", "zip"]

_READ_CHUNK = 1024 * 1024


def archive_kind(name: str, data: bytes, content_type: str = "") -> ArchiveKind | None:
    """`zip` or `tar.gz` by content type, then file name, then magic bytes; else None."""
    lower = name.lower().split("?", 1)[0]
    if "application/zip" in content_type or lower.endswith(".zip"):
        return "zip"
    gzip_types = ("application/gzip", "application/x-gzip", "application/x-tar+gzip")
    if any(t in content_type for t in gzip_types) or lower.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if data[:2] == b"PK":
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar.gz"
    return None


def read_archive(
    data: bytes, kind: ArchiveKind, *, limits: Limits, label: str, links: bool = True
) -> Payload:
    """The regular files of an archive, checked against the rules above; with
    `links=False` any link is refused (`unsafe-entry`) instead of copied.

    Raises:
        Refused: `unsafe-entry`, `too-large` or `archive-invalid`, with a
            message naming `label` (the archive's URL or path) and the entry.
    """
    import tarfile
    import zipfile
    import zlib

    reader = _Collector(limits=limits, label=label, links=links)
    try:
        if kind == "zip":
            _read_zip(data, reader)
        else:
            _read_targz(data, reader)
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise Refused(
            "archive-invalid",
            f"{label} is not a readable {kind} archive ({error}). Check that the file is "
            "complete and of the type its name says.",
        ) from None
    return reader.payload()


def normalize_member(name: str, *, label: str) -> str:
    """An archive member's path as a clean relative POSIX path ("" for the root).

    Raises:
        Refused: `unsafe-entry` for every form of path that could leave the folder.
    """

    def unsafe(why: str) -> Refused:
        return Refused(
            "unsafe-entry",
            f"{label} holds the entry {name!r}, {why}; nothing from it was written. "
            "Archive members must be relative paths inside the skill folder.",
        )

    if name.startswith("/") or segment_problem(name[:2]) == "drive":
        return _raise(unsafe("an absolute path"))
    parts = [part for part in name.split("/") if part]
    if parts and parts[0] == "." and (name.startswith("./") or name == "."):
        parts = parts[1:]
    for part in parts:
        problem = segment_problem(part)
        if problem:
            return _raise(unsafe(f"which has a segment that {SEGMENT_WORDS[problem]}"))
    return "/".join(parts)


def _raise(error: Refused) -> str:
    raise error


class _Collector:
    """Accumulates members under the limits; resolves links at the end."""

    def __init__(self, *, limits: Limits, label: str, links: bool = True) -> None:
        self.allow_links = links
        self.limits = limits
        self.label = label
        self.files: dict[str, bytes] = {}
        self.executable: set[str] = set()
        self.links: dict[str, tuple[str, bool]] = {}
        """link path -> (target path as written, hard link?)"""
        self.folded: dict[str, str] = {}
        self.total = 0
        self.entries = 0

    def remaining(self) -> int:
        return self.limits.max_unpacked_bytes - self.total

    def too_large(self, what: str) -> Refused:
        return Refused(
            "too-large",
            f"{self.label} {what} (limits: {self.limits.max_files} files, "
            f"{self.limits.max_unpacked_bytes} bytes unpacked); it was not unpacked. "
            "A skill this large is likely a mistake or a zip bomb.",
        )

    def entry(self, raw: str) -> str:
        self.entries += 1
        if self.entries > 4 * self.limits.max_files:
            raise self.too_large(f"has more than {4 * self.limits.max_files} entries")
        return normalize_member(raw, label=self.label)

    def claim(self, path: str, raw: str) -> None:
        key = unicodedata.normalize("NFC", path).casefold()
        if key in self.folded:
            raise Refused(
                "unsafe-entry",
                f"{self.label} holds {raw!r} twice (or two names that differ only by case or "
                f"Unicode form: {self.folded[key]!r}); refusing rather than guessing which "
                "one to keep.",
            )
        self.folded[key] = path
        if len(self.folded) > self.limits.max_files:
            raise self.too_large(f"has more than {self.limits.max_files} files")

    def add_file(self, path: str, raw: str, data: bytes, *, executable: bool) -> None:
        self.claim(path, raw)
        self.total += len(data)
        if self.total > self.limits.max_unpacked_bytes:
            raise self.too_large("unpacks to more bytes than allowed")
        self.files[path] = data
        if executable:
            self.executable.add(path)

    def add_link(self, path: str, raw: str, target: str, *, hard: bool) -> None:
        if not self.allow_links:
            raise self.refuse_type(raw, "link")
        self.claim(path, raw)
        self.links[path] = (target, hard)

    def refuse_type(self, raw: str, what: str) -> Refused:
        return Refused(
            "unsafe-entry",
            f"{self.label} holds {raw!r}, a {what}; a skill may only contain files and "
            "folders, so nothing from it was written.",
        )

    def payload(self) -> Payload:
        for path, (target, hard) in self.links.items():
            resolved = self._resolve(path, target, hard)
            data = self.files[resolved]
            self.total += len(data)
            if self.total > self.limits.max_unpacked_bytes:
                raise self.too_large("unpacks to more bytes than allowed")
            self.files[path] = data
            if resolved in self.executable:
                self.executable.add(path)
        return Payload(files=dict(self.files), executable=frozenset(self.executable))

    def _resolve(self, path: str, target: str, hard: bool) -> str:
        seen = {path}
        current, current_target, current_hard = path, target, hard
        while True:
            base = "" if current_hard else posixpath.dirname(current)
            joined = posixpath.normpath(posixpath.join(base, current_target))
            if current_target.startswith("/") or joined == ".." or joined.startswith("../"):
                raise Refused(
                    "unsafe-entry",
                    f"{self.label} holds the link {path!r} -> {target!r}, which leaves the "
                    "skill folder; nothing from it was written.",
                )
            if joined in self.files:
                return joined
            if joined in self.links and joined not in seen and len(seen) < 40:
                seen.add(joined)
                current = joined
                current_target, current_hard = self.links[joined]
                continue
            raise Refused(
                "unsafe-entry",
                f"{self.label} holds the link {path!r} -> {target!r}, which does not point "
                "at a file in the archive (a folder, a loop or nothing); links to folders "
                "are not installed.",
            )


def _gunzip(data: bytes, limit: int, on_over: Refused) -> bytes:
    """All members of a gzip stream, decompressed, refusing past `limit` bytes (the
    bound holds before anything is parsed: a bomb never fills memory)."""
    import zlib

    out: list[bytes] = []
    size = 0
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        chunk = inflater.decompress(rest, limit - size + 1)
        size += len(chunk)
        if size > limit or inflater.unconsumed_tail:
            raise on_over
        out.append(chunk)
        if not inflater.eof:
            raise zlib.error("the gzip stream is truncated")
        rest = inflater.unused_data
    return b"".join(out)


def _read_targz(data: bytes, reader: _Collector) -> None:
    import tarfile

    limits = reader.limits
    # Headers and padding cost at most ~1.5 KiB per entry on top of the file bytes.
    budget = limits.max_unpacked_bytes + 4 * limits.max_files * 1536 + 65536
    unpacked = _gunzip(data, budget, reader.too_large("decompresses to more bytes than allowed"))
    with tarfile.open(fileobj=io.BytesIO(unpacked), mode="r:") as archive:
        for member in archive:
            raw = member.name
            path = reader.entry(raw)
            if member.isdir():
                continue
            if not path:
                raise reader.refuse_type(raw, "file entry without a name")
            if member.issym() or member.islnk():
                hard = member.islnk()
                target = member.linkname
                if hard:
                    target = normalize_member(target, label=reader.label)
                reader.add_link(path, raw, target, hard=hard)
                continue
            if not member.isreg():
                kind = "device file" if (member.ischr() or member.isblk()) else "special file"
                raise reader.refuse_type(raw, "FIFO" if member.isfifo() else kind)
            if member.size > reader.remaining():
                raise reader.too_large("unpacks to more bytes than allowed")
            handle = archive.extractfile(member)
            content = handle.read() if handle is not None else b""
            reader.add_file(path, raw, content, executable=bool(member.mode & 0o111))


def _read_zip(data: bytes, reader: _Collector) -> None:
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            raw = info.filename
            path = reader.entry(raw)
            mode = (info.external_attr >> 16) & 0xFFFF if info.create_system == 3 else 0
            if info.is_dir() or stat.S_ISDIR(mode):
                continue
            if not path:
                raise reader.refuse_type(raw, "file entry without a name")
            if info.flag_bits & 0x1:
                raise Refused(
                    "unsafe-entry",
                    f"{reader.label} holds the encrypted entry {raw!r}; encrypted archives "
                    "cannot be verified and are not installed.",
                )
            if stat.S_ISLNK(mode):
                target = _read_member(archive, info, 4096, reader).decode("utf-8", "replace")
                reader.add_link(path, raw, target, hard=False)
                continue
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # no type bits: a file
                kind = "FIFO" if stat.S_ISFIFO(mode) else "device or special file"
                raise reader.refuse_type(raw, kind)
            content = _read_member(archive, info, reader.remaining(), reader)
            reader.add_file(path, raw, content, executable=bool(mode & 0o111))


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, reader: _Collector
) -> bytes:
    """The member's bytes, never more than `limit` whatever its header claims."""
    if info.file_size > limit:
        raise reader.too_large("unpacks to more bytes than allowed")
    chunks: list[bytes] = []
    size = 0
    with archive.open(info) as handle:
        while True:
            chunk = handle.read(min(_READ_CHUNK, limit - size + 1))
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise reader.too_large("unpacks to more bytes than allowed")
            chunks.append(chunk)
    return b"".join(chunks)


def make_targz(
    files: Mapping[str, bytes],
    executable: frozenset[str] = frozenset(),
    *,
    root: str = "",
    pax: bool = False,
) -> bytes:
    """A reproducible `.tar.gz` of `files` (see the module docstring).

    With `root`, every path is put under `root/` (a skill folder by name, with its
    folder entries, mode 0755); `pax` writes the PAX format instead of ustar (the
    OCI layouts' choice; with plain names the bytes differ only in the magic).

    Raises:
        ValueError: a path does not fit a ustar header (over 255 bytes, or a final
            component over 100 bytes).
    """
    import gzip
    import tarfile

    raw = io.BytesIO()
    prefix = f"{root}/" if root else ""
    folders = {""} if root else set()
    for path in files if root else ():
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    entries = sorted([*files, *(f"{d}/" if d else "" for d in folders)], key=lambda p: p.encode())
    form = tarfile.PAX_FORMAT if pax else tarfile.USTAR_FORMAT
    with tarfile.open(fileobj=raw, mode="w", format=form) as archive:
        for path in entries:
            if path.endswith("/") or path == "":
                folder = tarfile.TarInfo((prefix + path).rstrip("/"))
                folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, 0
                folder.uid = folder.gid = 0
                folder.uname = folder.gname = ""
                archive.addfile(folder)
                continue
            content = files[path]
            info = tarfile.TarInfo(prefix + path)
            info.size = len(content)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = 0o755 if path in executable else 0o644
            info.type = tarfile.REGTYPE
            archive.addfile(info, io.BytesIO(content))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as packed:
        packed.write(raw.getvalue())
    return out.getvalue()
