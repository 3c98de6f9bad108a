"""Digests of skills and artifacts, in the forms the ecosystem compares (pure).

- `sha256_digest(data)`: `sha256:` + 64 lowercase hex of raw bytes. The discovery
  index's artifact `digest` (a SKILL.md or an archive) and every per-file digest.
- `skill_digest(files)`: the Cloudflare discovery draft's skill digest: sha256 of
  the manifest of `{path}\\0{hex}\\n` lines, sorted by the path's UTF-8 bytes, every
  line ending in `\\n`. skillpack records it for every installed skill.
- `computed_hash(files)`: the `skills` npm CLI's `computedHash` (skills-lock.json):
  hex sha256 of `path` then content for each file, no separators, in JavaScript
  `localeCompare` order (ICU, emulated for ASCII paths by `_js_locale_key`).
- `legacy_index_digest(files)`: what that CLI records as `wellKnownDigest` for an
  entry of the older index form (sorted `path\\0content\\0`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from .._model import DIGEST_PREFIX as PREFIX
from .._model import is_digest as is_digest
from .._model import sha256_digest as sha256_digest


def file_digests(files: Mapping[str, bytes]) -> dict[str, str]:
    """Path -> `sha256:` digest of each file, in UTF-8 byte order of the paths."""
    return {path: sha256_digest(files[path]) for path in sorted(files, key=_utf8)}


def skill_digest(digests: Mapping[str, str]) -> str:
    """The draft's skill digest over per-file digests (path -> `sha256:<hex>`).

    Lines are `{path}\\0{hex}\\n`, sorted by the path's UTF-8 bytes; the digest is
    `sha256:` + the sha256 of their concatenation.
    """
    manifest = b"".join(
        path.encode("utf-8") + b"\0" + digests[path].removeprefix(PREFIX).encode("ascii") + b"\n"
        for path in sorted(digests, key=_utf8)
    )
    return sha256_digest(manifest)


def computed_hash(files: Mapping[str, bytes]) -> str:
    """The `skills` npm CLI's `computedHash` of an installed folder's files.

    Advisory: that CLI sorts with `localeCompare`, which depends on ICU and the
    process locale; this is its en-US/root order for printable-ASCII paths.
    """
    hasher = hashlib.sha256()
    for path in sorted(files, key=_js_locale_key):
        hasher.update(path.encode("utf-8"))
        hasher.update(files[path])
    return hasher.hexdigest()


def legacy_index_digest(files: Mapping[str, bytes]) -> str:
    """`wellKnownDigest` of an older-form index entry: sorted `path\\0content\\0`."""
    hasher = hashlib.sha256()
    for path in sorted(files, key=_utf16):
        hasher.update(path.encode("utf-8") + b"\0")
        hasher.update(files[path] + b"\0")
    return PREFIX + hasher.hexdigest()


def _utf8(path: str) -> bytes:
    return path.encode("utf-8", "surrogatepass")


def _utf16(path: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units.
    return path.encode("utf-16-be", "surrogatepass")


# ICU root collation of printable ASCII: punctuation and symbols in this order, then
# digits, then letters with case ignored at the primary level.
_ICU_ASCII = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_ICU_RANK = {char: rank for rank, char in enumerate(_ICU_ASCII)}


def _js_locale_key(path: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Sort key equal to `a.localeCompare(b)` under en-US for printable-ASCII text:
    primary weights of the whole string first, then lowercase before uppercase.
    Other characters sort by code point after ASCII (not ICU-exact)."""
    primary = tuple(_ICU_RANK.get(char.lower(), 1000 + ord(char)) for char in path)
    tertiary = tuple(1 if char.isupper() else 0 for char in path)
    return primary, tertiary
