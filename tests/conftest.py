"""Shared fixtures: an isolated home, an isolated cache, and a skill-folder writer."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from skillpack.runtime._session import Session

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def node_major() -> int:
    """The major version of the `node` first on PATH (0 when there is none): the Node
    tools (the MCP Inspector, Codex, OpenCode) need 22 or later."""
    node = shutil.which("node")
    if node is None:
        return 0
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    found = re.match(r"v(\d+)", version.strip())
    return int(found.group(1)) if found else 0


REAL_SKILLS = SHARED / "corpus" / "real-skills"
CORPUS_MISSING = (
    f"the real-skill corpus is not at {REAL_SKILLS}: it sits beside the repository as "
    "../shared on CI and the team's machines; tests marked `corpus` need it"
)

# Property tests (hypothesis). The default profile is what CI runs: derandomized (the
# same examples every run, no example database written) and small enough that every
# property test together adds a few seconds to the suite. `long` is for hunting:
# `python -m pytest tests -k properties --hypothesis-profile long` (see bench/README.md).
settings.register_profile(
    "ci",
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")  # `--hypothesis-profile NAME` (hypothesis' plugin) wins


_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "::", ""}


def _loopback_host(host: object) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    return host.lower() in _LOOPBACK_NAMES or host.startswith("127.")


MEMORY_TEMP = Path("/dev/shm")
MEMORY_TEMP_FREE = 2 * 1024**3
"""The free bytes a memory file system needs to hold the suite's temporary folders
(a run leaves about 250 MB, and pytest keeps the last three runs)."""


def memory_temp_root(environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where the tests' temporary folders go when not where `tempfile` says: a tmpfs
    (`/dev/shm`) with room, unless TMPDIR, TEMP or TMP names a folder. Creating and
    deleting thousands of small files there costs a fraction of the system time a
    disk's file system does, and nothing the tests check differs (atomic renames,
    inotify, locks, mmap'd SQLite all behave alike)."""
    if any(environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return None
    try:
        mounts = Path("/proc/mounts").read_text(encoding="utf-8").splitlines()
        stats = os.statvfs(MEMORY_TEMP)
    except OSError:
        return None
    tmpfs = any(line.split()[1:3] == [str(MEMORY_TEMP), "tmpfs"] for line in mounts)
    room = stats.f_bavail * stats.f_frsize >= MEMORY_TEMP_FREE
    return MEMORY_TEMP if tmpfs and room and os.access(MEMORY_TEMP, os.W_OK) else None


def pytest_configure(config: pytest.Config) -> None:
    """Tests never reach the network beyond loopback: a name or address elsewhere is
    refused in this process (servers under test run as subprocesses on 127.0.0.1).
    Temporary folders (`tmp_path`, `tempfile`) go to `memory_temp_root()` if any."""
    import socket
    import tempfile

    memory = memory_temp_root()
    if memory is not None:
        tempfile.tempdir = str(memory)

    resolve, connect = socket.getaddrinfo, socket.socket.connect

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback_host(host):
            raise socket.gaierror(socket.EAI_NONAME, f"tests never reach the network: {host!r}")
        return resolve(host, *args, **kwargs)

    def connect_loopback(sock: Any, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback_host(address[0]):
            raise ConnectionRefusedError(f"tests never reach the network: {address!r}")
        connect(sock, address)

    socket.getaddrinfo = loopback_only
    socket.socket.connect = connect_loopback  # type: ignore[method-assign]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip every test marked `corpus`, with one reason, when the corpus is absent; lift
    the per-test timeout under the `long` hypothesis profile (minutes per property)."""
    if config.getoption("hypothesis_profile", None) == "long":
        for item in items:
            item.add_marker(pytest.mark.timeout(0))
    if REAL_SKILLS.is_dir():
        return
    skip = pytest.mark.skip(reason=CORPUS_MISSING)
    for item in items:
        if item.get_closest_marker("corpus") is not None:
            item.add_marker(skip)


HOME_UNSET = (
    "SKILLS_PROMPT_CHAR_BUDGET",
    "CODEX_HOME",
    "OPENCODE_CONFIG_DIR",
    "SLASH_COMMAND_TOOL_CHAR_BUDGET",
)
"""What `isolated_home` removes from the environment: settings read from the user's."""


def home_env(home: Path) -> dict[str, str]:
    """The variables `isolated_home` sets: every user-level path under `home`."""
    return {
        "SKILLPACK_HOME": str(home),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "SKILLPACK_CACHE_DIR": str(home / "cache"),
        "SKILLPACK_ADMIN_DIR": str(home / "admin-skills"),
    }


def isolated_env(home: Path) -> dict[str, str]:
    """This process's environment as `isolated_home` makes it, for a child started by a
    fixture wider than one test (set up before `isolated_home` runs)."""
    env = {k: v for k, v in os.environ.items() if k not in HOME_UNSET}
    return {**env, **home_env(home)}


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point every user-level path at a temp dir: tests never touch the real home."""
    home = tmp_path_factory.mktemp("home")
    for key, value in home_env(home).items():
        monkeypatch.setenv(key, value)
    for key in HOME_UNSET:
        monkeypatch.delenv(key, raising=False)
    return home


WriteSkill = Callable[..., Path]
T = TypeVar("T")


def record_calls(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, note: Callable[..., T]
) -> list[T]:
    """Replace `owner.name` with a wrapper that appends `note(*args, **kwargs)` for each
    call, then calls the real one; the list of notes, in call order."""
    seen: list[T] = []
    real = getattr(owner, name)

    def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(note(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return seen


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths handed to the parser, in order (the parser itself still runs)."""
    from skillpack.parse import _frontmatter

    return record_calls(
        monkeypatch, _frontmatter, "parse_skill_bytes", lambda data, **kw: str(kw["path"])
    )


def stored_snapshots() -> int:
    """Root snapshots in the index the isolated home points at (0 when there is none)."""
    import sqlite3

    from skillpack.index._cache import index_path

    path = index_path()
    if not path.exists():
        return 0
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM skill_cache_roots").fetchone()[0])


def root_session(root: Path, **kwargs: Any) -> Session:
    """A `Session` over the skills under `root` only (no user, system or cache)."""
    from skillpack.runtime._session import Session

    return Session.open(
        cwd=str(root),
        roots=[str(root)],
        include_user=False,
        include_system=False,
        use_cache=False,
        **kwargs,
    )


@pytest.fixture
def write_skill(tmp_path: Path) -> WriteSkill:
    """Write `<base>/<rel>/SKILL.md` and return the skill folder.

    `frontmatter` is a dict rendered as simple `key: value` lines, or a raw string
    used verbatim between the `---` lines; `text` overrides the whole file.
    """

    def write(
        rel: str,
        *,
        name: str | None = None,
        description: str | None = "A test skill. Use when testing.",
        body: str = "# Instructions\n\nDo the thing.\n",
        frontmatter: str | None = None,
        text: str | None = None,
        base: Path | None = None,
        files: dict[str, str] | None = None,
    ) -> Path:
        folder = (base or tmp_path) / rel
        folder.mkdir(parents=True, exist_ok=True)
        if text is None:
            if frontmatter is None:
                lines = []
                lines.append(f"name: {name if name is not None else folder.name}")
                if description is not None:
                    lines.append(f"description: {description}")
                frontmatter = "\n".join(lines)
            text = f"---\n{textwrap.dedent(frontmatter).strip(chr(10))}\n---\n{body}"
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        for relpath, content in (files or {}).items():
            target = folder / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        return folder

    return write


def rewrite_keeping_mtime_and_size(path: Path, text: str) -> None:
    """Rewrite `path` in place with same-size `text` and restore its mtime, as an
    editor that preserves times would; only ctime shows the edit. Rewrites until the
    clock has moved on from the first write, so ctime differs even on a coarse clock."""
    before = path.stat()
    assert len(text.encode("utf-8")) == before.st_size
    for _ in range(10_000):
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = path.stat()
        if after.st_ctime_ns != before.st_ctime_ns:
            break
    assert (after.st_mtime_ns, after.st_size, after.st_ino) == (
        before.st_mtime_ns,
        before.st_size,
        before.st_ino,
    )
    assert after.st_ctime_ns != before.st_ctime_ns


DRIP_S = 0.4
"""Seconds between the bytes of a drip-fed request head (`_drip_until_closed`)."""
QUICK_DEADLINES = "1,0.5"
"""The head and body deadlines (`SKILLPACK_HTTP_DEADLINES`) of the HTTP servers whose
tests wait for one (tests/mcp, tests/rpc): a second for a head (past the `DRIP_S`
between the bytes of a drip-fed head, so the head deadline, not a read timeout, closes
it) and half a second for a body, instead of ten each."""
QUICKLY_S = 8.0
"""Those tests' sockets give up after this long: well past the quick deadlines, short
of the defaults, so a server that kept the defaults fails them."""


def _drip_until_closed(port: int, path: str) -> float:
    """Seconds a request head sent a byte every `DRIP_S` to 127.0.0.1:`port` lasted
    before the server closed the connection (each byte comes well within any per-read
    timeout); 60 when it was still open after a minute."""
    import socket
    import time

    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n" + "X-Pad: a\r\n" * 20).encode()
    began = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.settimeout(DRIP_S)
        for at in range(len(head)):
            if time.monotonic() - began >= 60:
                break
            try:
                sock.sendall(head[at : at + 1])
                if sock.recv(1024) == b"":
                    return time.monotonic() - began
            except TimeoutError:
                continue  # still open: the next byte
            except OSError:
                return time.monotonic() - began  # reset: closed
    return 60.0


@pytest.fixture
def drip_until_closed() -> Callable[[int, str], float]:
    """Drip-feed a request head to a local server (`_drip_until_closed`)."""
    return _drip_until_closed
