"""What the user typed as SOURCE, classified: a site, a git repository, an archive, a folder.

| SOURCE | kind |
|---|---|
| `./dir`, `/abs/dir`, `~/dir` (an existing folder; a `SKILL.md` means its folder) | folder |
| `x.zip`, `x.tar.gz`, `x.tgz` (a local file or an https URL) | archive |
| `owner/repo[/sub/path][#ref]`, `github:owner/repo…` | git (GitHub) |
| `https://github.com/o/r[/tree/<ref>/<sub>]`, `https://gitlab.com/…` | git |
| a URL with a `.git` segment (`…/repo.git[/sub/path][#ref]`), `file://…/x.git` | git |
| `git@host:…`, `ssh://…`, `git://…`, `git+https://…` | git |
| any other `https://host[/base]` | site (its well-known index) |
| `oci://REGISTRY/REPO[:TAG][@DIGEST]` | oci (an OCI registry artifact) |

`#ref` picks a branch, tag or commit; the sub-path limits discovery to one folder of
the repository. A site URL given with the index path (`…/.well-known/agent-skills/
index.json`) means its base.

Each kind classifies its own forms (`_kinds.SOURCE_KINDS`, tried in order, the
helpers below); `_kinds.parse_source` asks them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from .._errors import UsageError
from .._paths import expand_home

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz")
_SHORTHAND = re.compile(r"(?:github:)?([A-Za-z0-9][\w.-]*)/([\w.-]+?)(?:\.git)?((?:/[^#]*)?)")
_INDEX_SUFFIXES = ("/.well-known/agent-skills/index.json", "/.well-known/skills/index.json")


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """A classified SOURCE."""

    kind: str
    """The name of the registered kind (`_kinds.SOURCE_KINDS`) that classified it:
    `site`, `git`, `archive`, `folder`, `oci`."""
    text: str
    """As the user gave it."""
    location: str
    """Site base URL, clone URL, archive URL or absolute path, or folder path."""
    ref: str | None = None
    """Git branch, tag or commit (`#ref`)."""
    subpath: str | None = None
    """Folder inside the repository to search (git only)."""
    github: str | None = None
    """`owner/repo` when the repository is on github.com."""
    insecure: bool = False
    """Reached over plain http or unchecked TLS (recorded by an install with
    `--insecure`, read back by `update`)."""

    @property
    def is_local(self) -> bool:
        return self.kind == "folder" or (
            self.kind == "archive" and not self.location.startswith(("http://", "https://"))
        )


def classify_git(given: str) -> Source | None:
    """A git repository: ssh/git schemes, forge or `.git` URLs, `owner/repo` shorthand."""
    if given.startswith(("git@", "ssh://", "git://", "git+")):
        url, ref = _fragment(given.removeprefix("git+"))
        url, subpath = _split_dot_git(url)
        return Source(kind="git", text=given, location=url, ref=ref, subpath=subpath)
    if "://" in given:
        return _git_url(given)
    match = _SHORTHAND.fullmatch(_fragment(given)[0])
    if match is None:
        return None
    owner, repo, rest = match.groups()
    return Source(
        kind="git",
        text=given,
        location=f"https://github.com/{owner}/{repo}.git",
        ref=_fragment(given)[1],
        subpath=rest.strip("/") or None,
        github=f"{owner}/{repo}",
    )


SOURCE_FORMS = (
    "Give a site (https://example.com), a git repository (owner/repo, "
    "https://host/repo.git, with optional /sub/path and #ref), an archive (.zip, .tar.gz), "
    "an OCI artifact (oci://registry/repo:tag) or a local folder."
)


def classify_local(given: str, cwd: str) -> Source | None:
    """A path on this machine: a folder (a `SKILL.md` means its folder) or an archive
    file; None for text that names nothing and does not look like a path."""
    explicit = given.startswith(("/", "./", "../", "~", ".\\")) or given in (".", "..")
    path = os.path.abspath(os.path.join(cwd, expand_home(given)))
    if not explicit and not os.path.exists(path):
        return None
    if os.path.isdir(path):
        return Source(kind="folder", text=given, location=path)
    if os.path.isfile(path):
        if os.path.basename(path) == "SKILL.md":
            return Source(kind="folder", text=given, location=os.path.dirname(path))
        if path.lower().endswith(ARCHIVE_SUFFIXES):
            return Source(kind="archive", text=given, location=path)
        raise UsageError(
            f"{path} is a file but not an archive (.zip, .tar.gz, .tgz) or a SKILL.md."
        )
    raise UsageError(f"No such file or folder: {path}. Check the path.")


def _fragment(text: str) -> tuple[str, str | None]:
    base, sep, ref = text.partition("#")
    return base, (ref.strip() or None) if sep else None


def _split_dot_git(url: str) -> tuple[str, str | None]:
    """`…/repo.git/sub/path` -> (`…/repo.git`, `sub/path`)."""
    match = re.search(r"\.git(?=/|$)", url)
    if match is None:
        return url, None
    rest = url[match.end() :].strip("/")
    return url[: match.end()], rest or None


def _git_url(given: str) -> Source | None:
    base, ref = _fragment(given)
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    host = (parts.hostname or "").lower()
    if host in ("github.com", "www.github.com", "gitlab.com"):
        return _forge(given, parts.scheme, host, path, ref)
    if re.search(r"\.git(?=/|$)", path):
        url, subpath = _split_dot_git(urlunsplit((parts.scheme, parts.netloc, path, "", "")))
        return Source(kind="git", text=given, location=url, ref=ref, subpath=subpath)
    return None


def classify_site(given: str) -> Source | None:
    """Any other URL: an archive (by its suffix) or a site (its base, an index path
    dropped); None for text that is not a URL.

    Raises:
        UsageError: a `file://` URL (only a git repository may be named so).
    """
    if "://" not in given or classify_git(given) is not None:
        return None
    base, _ref = _fragment(given)
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    if parts.scheme == "file":
        raise UsageError(
            f"{given}: a file:// URL must name a git repository ending in .git; for a "
            "local folder or archive give its path instead."
        )
    if path.lower().endswith(ARCHIVE_SUFFIXES):
        return Source(kind="archive", text=given, location=base)
    for suffix in _INDEX_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    site = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    return Source(kind="site", text=given, location=site)


def _forge(given: str, scheme: str, host: str, path: str, ref: str | None) -> Source:
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2:
        raise UsageError(f"{given} does not name a repository (expected /owner/repo).")
    owner, repo = segments[0], segments[1].removesuffix(".git")
    rest = segments[2:]
    if rest and rest[0] == "-":  # GitLab: /-/tree/<ref>/<path>
        rest = rest[1:]
    subpath: str | None = None
    if len(rest) >= 2 and rest[0] in ("tree", "blob"):
        ref = ref or rest[1]
        subpath = "/".join(rest[2:]) or None
    elif rest:
        subpath = "/".join(rest)
    netloc = "github.com" if host == "www.github.com" else host
    return Source(
        kind="git",
        text=given,
        location=f"{scheme}://{netloc}/{owner}/{repo}.git",
        ref=ref,
        subpath=subpath,
        github=f"{owner}/{repo}" if netloc == "github.com" else None,
    )
