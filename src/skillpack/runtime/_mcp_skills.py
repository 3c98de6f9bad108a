"""Skills that other MCP servers publish (`[[mcp_servers]]`): a `SkillSource` for scope `mcp`.

skillpack is the host here, following the MCP skills extension:

- **Listing, never fetching.** `catalog()` walks each server's `skills/list` and builds
  skills from the entries alone (their frontmatter goes through the same parser as a
  SKILL.md on disk). A SKILL.md is fetched only when the skill is loaded, a file only
  when it is read.
- **Namespaced.** A server's label is its skills' namespace: `docs:refunds`. Scope `mcp`
  ranks below every local scope, so an MCP skill never shadows a local one; a local
  skill of the same name shadows it with a `name-shadowed` warning, and two servers'
  skills of one name tie (`name-ambiguous`): reach them as `<server>:<name>`.
- **Verified.** Every fetched file must have the size and `sha256:` digest the listing
  gave, and a fetched SKILL.md's frontmatter (read as YAML 1.2) must equal the listed
  one; otherwise the read is refused. Verified bytes are cached by
  (server, URI, digest), in memory, up to `CACHE_BYTES`.
- **Not trusted.** `allowed-tools` and `hooks` of an MCP skill are dropped (they would
  widen what the skill may do), and skill paths (`mcp://<server>/...`) name the server
  wherever the skill's content is shown. Skills whose `resources` are `"dynamic"`
  (no digests) are not loaded.

The SDK is asynchronous: one event loop runs on a daemon thread and every call blocks
the caller until it answers (each within the server's `timeout`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import queue
import sys
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Final, TextIO, TypeVar
from urllib.parse import unquote

from .._errors import SkillIOError, SkillNotFoundError, SkillpackError
from .._limits import MAX_LISTED_FILES, MCP_SKILL_MAX_BYTES, MCP_SKILL_MAX_FILES
from .._model import (
    SKILL_FILE,
    Catalog,
    Problem,
    Root,
    Skill,
    SkillFile,
    SkillLocation,
    is_digest,
    sha256_digest,
)
from .._paths import segment_problem
from ..config._schema import McpServerConfig
from ._mcp_wire import (
    MESSAGE_MAX_BYTES,
    bounded_http_client,
    bounded_stdio,
    too_large_reason,
)

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
ROOT: Final = "mcp://"
"""The root of every MCP skill: a skill's folder is `mcp://<server>/<skill-path>`."""
CACHE_BYTES: Final = 64 * 1024 * 1024
MAX_PAGES: Final = 64
"""`skills/list` pages read per server at most (the MCP Inspector's bound too)."""
LIST_MAX_BYTES: Final = 32 * 1024 * 1024
"""A server's whole `skills/list` at most (each page is also one bounded message,
`_mcp_wire.MESSAGE_MAX_BYTES`): about 30,000 entries of 1 KB."""
T = TypeVar("T")

Connect = Callable[[McpServerConfig], AbstractAsyncContextManager[Any]]
"""Opens a connected client (the SDK's `Client`) for one server entry."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Published:
    """One skill as a server's listing describes it."""

    server: str
    uri: str
    """The SKILL.md URI on that server."""
    frontmatter: Mapping[str, Any]
    files: Mapping[str, tuple[str, str, int]]
    """Relative path -> (URI, digest, size); the SKILL.md included."""


class McpSkills:
    """The skills of the configured MCP servers: a catalog, and reads verified against it.

    Thread-safe. `close()` ends every connection (and stdio server process).
    """

    def __init__(
        self, servers: Sequence[McpServerConfig], *, connect: Connect | None = None
    ) -> None:
        """Args:
        servers: The `[[mcp_servers]]` entries to connect to (`Config.mcp_hosts`).
        connect: Opens a client for an entry (default: stdio or streamable HTTP with
            the official SDK); tests pass in-memory clients.
        """
        self.servers: tuple[McpServerConfig, ...] = tuple(servers)
        self._connect = connect or _sdk_client
        self._lock = threading.RLock()
        self._published: dict[str, Published] = {}
        self._clients: dict[str, _Held] = {}
        self._cache: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()
        self._cached_bytes = 0
        self._loop: _Loop | None = None

    # -- the catalog ------------------------------------------------------------

    def catalog(self) -> Catalog:
        """List every server now; a server that cannot be reached is a problem."""
        skills: list[Skill] = []
        problems: list[Problem] = []
        published: dict[str, Published] = {}
        for server in self.servers:
            try:
                entries = self._call(server, _list_skills, retry_if_closed=True)
            except SkillpackError as exc:
                problems.append(
                    Problem(
                        path=f"{ROOT}{server.name}",
                        severity="warning",
                        code="mcp-server-unavailable",
                        message=f"{exc} Its skills are left out until a refresh of the "
                        f"catalog lists it again; check [[mcp_servers]] '{server.name}' in "
                        "skillpack's config.",
                    )
                )
                continue
            for entry in entries:
                skill, found, noted = _skill_of(server.name, entry)
                problems.extend(noted)
                if skill is not None and found is not None:
                    skills.append(skill)
                    published[skill.key] = found
        with self._lock:
            self._published = published
        roots = (Root(path=ROOT, scope="mcp", follow_symlinks=False),)
        return Catalog(skills=tuple(skills), problems=tuple(problems), roots=roots)

    def owns(self, skill: Skill) -> bool:
        return skill.scope == "mcp" and skill.path.startswith(ROOT)

    def published(self, skill: Skill) -> Published:
        with self._lock:
            found = self._published.get(skill.key)
        if found is None:
            raise SkillNotFoundError(
                f"Skill '{skill.qualified_name}' is no longer published by its MCP server; "
                "refresh the catalog (`skillpack list`) to see what it serves now."
            )
        return found

    # -- SkillReader ------------------------------------------------------------

    def read_body(self, skill: Skill) -> str:
        from ..parse._frontmatter import split_frontmatter

        text = self._text(skill, SKILL_FILE)
        return split_frontmatter(text).body

    def read_body_head(self, skill: Skill, max_chars: int) -> str:
        """Nothing: search indexes MCP skills by their listing, never fetching a body."""
        return ""

    def version(self, skill: Skill) -> tuple[int, ...]:
        """(a number from the SKILL.md digest, its size): from the listing, no fetch."""
        _uri, digest, size = self.published(skill).files[SKILL_FILE]
        return int(digest[7:22], 16), size

    def list_files(self, skill: Skill) -> tuple[tuple[str, ...], bool]:
        from ..discovery._skill_files import fair_listing

        names = sorted(rel for rel in self.published(skill).files if rel != SKILL_FILE)
        return fair_listing(names, MAX_LISTED_FILES), len(names) > MAX_LISTED_FILES

    def read_file(self, skill: Skill, relpath: str) -> str:
        from ..discovery._confine import confined_parts

        return self._text(skill, "/".join(confined_parts(skill, relpath)))

    # -- SkillContent -----------------------------------------------------------

    def manifest(
        self, skill: Skill, *, max_files: int, max_bytes: int
    ) -> tuple[tuple[SkillFile, ...], bool]:
        files = self.published(skill).files
        order = sorted(files, key=lambda rel: (rel != SKILL_FILE, rel))
        listed = [SkillFile(path=r, size=files[r][2], digest=files[r][1]) for r in order]
        return tuple(listed[:max_files]), len(listed) > max_files

    def read_bytes(self, skill: Skill, relpath: str, *, max_bytes: int) -> bytes:
        from ..discovery._confine import confined_parts, too_large

        data = self._fetch(skill, "/".join(confined_parts(skill, relpath)))
        if len(data) > max_bytes:
            raise too_large(f"{relpath} of skill '{skill.qualified_name}'", len(data), max_bytes)
        return data

    # -- fetching and verifying -----------------------------------------------

    def _text(self, skill: Skill, relpath: str) -> str:
        data = self._fetch(skill, relpath)
        if b"\x00" in data:
            raise SkillIOError(
                f"{relpath} of skill '{skill.qualified_name}' is a binary file; only text "
                "files can be read."
            )
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SkillIOError(
                f"{relpath} of skill '{skill.qualified_name}' is not UTF-8 text ({exc})."
            ) from exc

    def _fetch(self, skill: Skill, relpath: str) -> bytes:
        """The verified bytes of one listed file: from the cache, else the server."""
        found = self.published(skill)
        listed = found.files.get(relpath)
        if listed is None:
            raise SkillNotFoundError(
                f"Skill '{skill.qualified_name}' lists no file {relpath!r}; a file its MCP "
                "server did not list is not read (see the skill's file listing)."
            )
        uri, digest, size = listed
        key = (found.server, uri, digest)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        server = self._server(found.server)
        data = self._call(server, _read_resource, uri)
        where = f"{uri} from MCP server '{found.server}'"
        if len(data) != size or sha256_digest(data) != digest:
            raise SkillIOError(
                f"Refused {where}: its {len(data)} bytes do not match the size ({size}) and "
                "digest the server listed, so it changed or was tampered with. Refresh "
                "the catalog to get the current listing."
            )
        if relpath == SKILL_FILE:
            _check_frontmatter(data, found, where)
        with self._lock:
            self._cache[key] = data
            self._cached_bytes += len(data)
            while self._cached_bytes > CACHE_BYTES and self._cache:
                _key, dropped = self._cache.popitem(last=False)
                self._cached_bytes -= len(dropped)
        return data

    # -- connections ------------------------------------------------------------

    def _server(self, name: str) -> McpServerConfig:
        for server in self.servers:
            if server.name == name:
                return server
        raise SkillNotFoundError(f"No MCP server '{name}' is configured any more.")

    def _call(
        self,
        server: McpServerConfig,
        operation: Callable[..., Awaitable[T]],
        *args: Any,
        retry_if_closed: bool = False,
    ) -> T:
        """Run `operation(client, *args)` against `server`, connecting first if needed.

        `retry_if_closed`: when the connection, kept from an earlier call, closes under
        this one (another call's answer over the bound cut it, or the server went away
        since), ask once more on a new connection; a second failure is the answer.

        Raises:
            SkillIOError: the server cannot be started or reached, answers with an
                error, or takes longer than its `timeout`.
        """
        import anyio

        loop = self._event_loop()
        held: _Held | None = None
        kept = False
        try:
            held, kept = self._client(server, loop)
            client = held.client

            async def bounded() -> T:
                with anyio.fail_after(server.timeout):
                    return await operation(client, *args)

            result: T = loop.portal.call(bounded)
            return result
        except SkillpackError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure of the server becomes one error
            if held is not None:
                self._drop(server.name, held)
            if retry_if_closed and kept and _closed(exc):
                return self._call(server, operation, *args)
            raise SkillIOError(
                f"MCP server '{server.name}' ({_describe(server)}) failed: {_reason(exc)}."
            ) from exc

    def _client(self, server: McpServerConfig, loop: _Loop) -> tuple[_Held, bool]:
        """The server's connection, and whether an earlier call made it (else it was
        made now)."""
        with self._lock:
            held = self._clients.get(server.name)
            if held is not None:
                return held, True
            held = loop.hold(self._connect(server), timeout=server.timeout)
            self._clients[server.name] = held
        return held, False

    def _drop(self, name: str, held: _Held) -> None:
        """Forget a failed connection (the next call reconnects). Another call that
        failed on it may have done so already: the connection now in its place is a
        newer one, in use, and stays."""
        with self._lock:
            if self._clients.get(name) is not held:
                return
            del self._clients[name]
        held.release()

    def _event_loop(self) -> _Loop:
        with self._lock:
            if self._loop is None:
                self._loop = _Loop()
            return self._loop

    def close(self) -> None:
        """Disconnect every server and stop the event loop; idempotent."""
        with self._lock:
            clients, self._clients = self._clients, {}
            loop, self._loop = self._loop, None
        for held in clients.values():
            held.release()
        if loop is not None:
            loop.stop()


@dataclass(kw_only=True, eq=False)
class _Held:
    """A connection kept open by one task on the loop until `release()`."""

    client: Any
    stop: Any
    task: concurrent.futures.Future[None]
    portal: Any

    def release(self) -> None:
        try:
            self.portal.call(self.stop.set)
            self.task.result(timeout=10)
        except Exception:  # noqa: BLE001, S110 - a connection that broke is already gone
            self.task.cancel()


class _Loop:
    """An anyio event loop on a daemon thread, reached through a blocking portal."""

    def __init__(self) -> None:
        import anyio
        from anyio.from_thread import BlockingPortal

        ready: queue.Queue[Any] = queue.Queue()

        async def main() -> None:
            async with BlockingPortal() as portal:
                ready.put(portal)
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(main)
            except BaseException as exc:  # noqa: BLE001 - reported to the waiting caller
                ready.put(exc)

        self.thread = threading.Thread(target=run, name="skillpack-mcp-upstream", daemon=True)
        self.thread.start()
        started = ready.get()
        if isinstance(started, BaseException):
            raise SkillIOError(f"Cannot start the MCP client's event loop: {started}")
        self.portal = started

    def hold(self, manager: AbstractAsyncContextManager[Any], *, timeout: float) -> _Held:
        """Enter `manager` in a task of its own (the SDK's task groups must be left by
        the task that entered them) and keep it open until the `_Held` is released.

        Raises:
            TimeoutError: it did not connect within `timeout` seconds.
            Exception: what connecting raised.
        """
        import anyio

        ready: concurrent.futures.Future[tuple[Any, Any]] = concurrent.futures.Future()

        async def keep() -> None:
            stop = anyio.Event()
            async with manager as client:
                ready.set_result((client, stop))
                await stop.wait()

        task = self.portal.start_task_soon(keep)
        done, _pending = concurrent.futures.wait(
            [ready, task], timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED
        )
        if ready in done:
            client, stop = ready.result()
            return _Held(client=client, stop=stop, task=task, portal=self.portal)
        task.cancel()
        if task in done and task.exception() is not None:
            raise task.exception()
        raise TimeoutError(f"no connection within {timeout:g} seconds")

    def stop(self) -> None:
        with contextlib.suppress(Exception):  # already stopped
            self.portal.call(self.portal.stop, True)
        self.thread.join(timeout=10)


# -- the protocol side (run on the loop) ------------------------------------------


def _requests() -> tuple[Any, Any, Any]:
    """The SDK types of `skills/list` and `resources/read` requests (built once)."""
    from typing import Literal

    import mcp.types as types
    from pydantic import TypeAdapter

    class ListSkillsRequest(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"

    return types, ListSkillsRequest, TypeAdapter(dict[str, Any])


async def _list_skills(client: Any) -> list[dict[str, Any]]:
    types, list_request, raw = _requests()
    extensions = getattr(client.server_capabilities, "extensions", None) or {}
    if SKILLS_EXTENSION not in extensions:
        raise SkillIOError(
            "The server does not declare the MCP skills extension "
            f"({SKILLS_EXTENSION}), so it publishes no skills."
        )
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    size = 0
    for _ in range(MAX_PAGES):
        page = await client.session.send_request(
            list_request(params=types.PaginatedRequestParams(cursor=cursor)), raw
        )
        skills = page.get("skills")
        if not isinstance(skills, list):
            raise SkillIOError("Its skills/list answer has no `skills` array.")
        size += len(json.dumps(skills, ensure_ascii=False, default=str))
        if size > LIST_MAX_BYTES:
            raise SkillIOError(
                f"Its skills/list is over {LIST_MAX_BYTES} bytes, more than skillpack keeps "
                "of one server; the listing was refused."
            )
        entries.extend(skills)
        cursor = page.get("nextCursor")
        if cursor is None:
            return entries
        if not isinstance(cursor, str) or cursor in seen:
            raise SkillIOError("Its skills/list gave a cursor twice; the listing was cut.")
        seen.add(cursor)
    raise SkillIOError(f"Its skills/list has more than {MAX_PAGES} pages; the rest was cut.")


@contextlib.contextmanager
def _child_stderr() -> Iterator[TextIO]:
    """Where a stdio server's stderr goes: this process's stderr when it is a real file
    (else the one it started with), or nowhere when neither is."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None and stream.fileno() >= 0:
                break
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation included
            continue
    else:
        with open(os.devnull, "w", encoding="utf-8") as devnull:
            yield devnull
        return
    yield stream


async def _read_resource(client: Any, uri: str) -> bytes:
    import base64

    result = await client.read_resource(uri)
    contents = list(result.contents)
    matching = [c for c in contents if str(c.uri) == uri] or contents[:1]
    if not matching:
        raise SkillIOError(f"resources/read of {uri} returned no content.")
    content = matching[0]
    text = getattr(content, "text", None)
    if isinstance(text, str):
        return text.encode("utf-8")
    return base64.b64decode(getattr(content, "blob", "") or "", validate=True)


@asynccontextmanager
async def _sdk_client(server: McpServerConfig) -> AsyncIterator[Any]:
    """A connected SDK client: a stdio child process, or streamable HTTP."""
    from mcp.client.client import Client

    if server.command is not None:
        # The child's stderr goes to a stream with a file descriptor, named each time
        # (a test runner's or a notebook's stand-in `sys.stderr` has none).
        with _child_stderr() as errlog:
            transport = bounded_stdio(
                server.command,
                list(server.args),
                env=dict(server.env) or None,
                cwd=server.cwd,
                errlog=errlog,
            )
            async with Client(transport, mode="legacy") as client:
                yield client
        return
    from mcp.client.streamable_http import streamable_http_client

    headers = {}
    if server.token_file is not None:
        headers["Authorization"] = f"Bearer {_token(server)}"
    http = bounded_http_client(headers)
    async with (
        http,
        Client(
            streamable_http_client(
                server.url or "", http_client=http, max_sse_event_size=MESSAGE_MAX_BYTES
            ),
            mode="legacy",
        ) as client,
    ):
        yield client


def _token(server: McpServerConfig) -> str:
    try:
        with open(server.token_file or "", encoding="utf-8") as handle:
            token = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillIOError(f"Cannot read the token file {server.token_file}: {exc}.") from exc
    if not token:
        raise SkillIOError(f"The token file {server.token_file} is empty.")
    return token


def _describe(server: McpServerConfig) -> str:
    return server.url or " ".join([server.command or "", *server.args]).strip()


def _closed(exc: BaseException) -> bool:
    """Whether `exc` is the connection closing under a call (the SDK's
    `CONNECTION_CLOSED`), not an answer of the server's or a timeout."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    if isinstance(exc, BaseExceptionGroup):
        return any(_closed(e) for e in exc.exceptions)
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer within its timeout"
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions)
    bound = too_large_reason(str(exc))
    if bound is not None:
        return bound.rstrip(".")
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# -- entries into skills ------------------------------------------------------------


def _local_path(server: str, uri: str) -> str | None:
    """`mcp://<server>/<skill-path>/SKILL.md` for a SKILL.md URI (another scheme than
    `skill` becomes the first segment), None when `uri` names no SKILL.md."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme or not rest.endswith(f"/{SKILL_FILE}"):
        return None
    if any(segment_problem(s) for s in rest.split("/")):
        return None
    prefix = "" if scheme == "skill" else f"{scheme}/"
    return f"{ROOT}{server}/{prefix}{rest}"


def _skill_of(server: str, entry: Any) -> tuple[Skill | None, Published | None, list[Problem]]:
    """A listing entry as a skill and the problems a local skill would have, or the
    problem that keeps it out."""
    uri = entry.get("uri") if isinstance(entry, dict) else None
    path = _local_path(server, uri) if isinstance(uri, str) and len(uri) <= 4096 else None

    def refused(code: str, why: str) -> tuple[None, None, list[Problem]]:
        where = path or f"{ROOT}{server}"
        message = (
            f"MCP server '{server}' lists {ascii(str(uri)[:200])}, which is {why}; it is skipped."
        )
        return None, None, [Problem(path=where, severity="warning", code=code, message=message)]

    if path is None or not isinstance(uri, str):
        return refused("mcp-skill-invalid", "not the URI of a SKILL.md")
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, dict) or not isinstance(frontmatter.get("name"), str):
        return refused("mcp-skill-invalid", "an entry without a frontmatter `name`")
    name = frontmatter["name"]
    unloadable = _unloadable_name(name)
    if unloadable:
        return refused("mcp-skill-invalid", f"named {ascii(name[:200])}, {unloadable}")
    if unquote(path.rsplit("/", 2)[-2]) != name:
        return refused("mcp-skill-invalid", f"not named like its path (name {name!r})")
    resources = entry.get("resources")
    if resources == "dynamic":
        return refused(
            "mcp-skill-unverifiable",
            'generated ("resources": "dynamic") and so has no digests to verify',
        )
    files = _files(uri, resources)
    if isinstance(files, str):
        return refused("mcp-skill-invalid", files)
    published = Published(server=server, uri=uri, frontmatter=frontmatter, files=files)
    _sku, digest, size = files[SKILL_FILE]
    text = "---\n" + json.dumps(frontmatter, ensure_ascii=False) + "\n---\n"
    from ..parse._frontmatter import parse_skill

    parsed = parse_skill(
        text,
        path=path,
        dir_name=name,
        location=SkillLocation(
            dir=path[: -len(SKILL_FILE) - 1],
            real_path=path,
            scope="mcp",
            root=ROOT,
            plugin=server,
            mtime_ns=int(digest[7:22], 16),
            size=size,
        ),
    )
    if parsed.skill is None:
        problem = parsed.problems[0] if parsed.problems else None
        reason = problem.message if problem else "not a usable skill"
        return refused("mcp-skill-invalid", f"not a usable skill ({reason})")
    # What would widen the skill's reach is not taken from another server.
    skill = replace(parsed.skill, allowed_tools=None, hooks=None)
    problems = list(parsed.problems)
    scripts = _scripts(name)
    if len(scripts) > 1:
        problems.append(
            Problem(
                path=path,
                severity="warning",
                code="name-mixed-script",
                field="name",
                message=(
                    f"MCP server '{server}' names a skill {ascii(name)}, which mixes "
                    f"{' and '.join(sorted(scripts))} letters: it can pass for another "
                    f"skill's name. Reach it as '{server}:{ascii(name)[1:-1]}' only if you "
                    "trust that server."
                ),
            )
        )
    return skill, published, problems


def _unloadable_name(name: str) -> str:
    """Why no skill folder on disk could carry `name` (empty when one could)."""
    problem = segment_problem(name)
    if problem in ("empty", "dot"):
        return "not a folder name"
    if problem == "separator":
        return "a path rather than a name (no skill folder on disk can be named so)"
    invisible = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
    if problem in ("nul", "control") or any(unicodedata.category(c) in invisible for c in name):
        return "a name with control or invisible characters"
    if len(name) > 255:
        return "longer than any folder name"
    return ""


def _scripts(name: str) -> set[str]:
    """The writing systems of the letters in `name` (LATIN, CYRILLIC, GREEK, ...)."""
    found = set()
    for c in name:
        if c.isalpha():
            found.add(unicodedata.name(c, "UNKNOWN").split(" ", 1)[0])
    return found


def _files(uri: str, resources: Any) -> dict[str, tuple[str, str, int]] | str:
    """Relative path -> (URI, digest, size) of a manifest, or why it is not valid."""
    if not isinstance(resources, list):
        return "an entry without a `resources` list"
    if len(resources) > MCP_SKILL_MAX_FILES:
        return f"a skill of {len(resources)} files, over the {MCP_SKILL_MAX_FILES}-file limit"
    root = uri[: -len(SKILL_FILE)]
    files: dict[str, tuple[str, str, int]] = {}
    total = 0
    for item in resources:
        if not isinstance(item, dict):
            return "a manifest with an entry that is not an object"
        file_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(file_uri, str) or not file_uri.startswith(root):
            return f"a manifest naming {str(file_uri)[:200]!r}, outside the skill"
        if not is_digest(digest):
            return f"a manifest whose {file_uri!r} has no sha256 digest"
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            return f"a manifest whose {file_uri!r} has no size"
        parts = [unquote(p) for p in file_uri[len(root) :].split("/")]
        if any(segment_problem(p) for p in parts):
            return f"a manifest naming {file_uri!r}, which is not a plain path"
        relpath = "/".join(parts)
        if relpath in files:
            return f"a manifest listing {file_uri!r} twice"
        files[relpath] = (file_uri, digest, size)
        total += size
    if SKILL_FILE not in files:
        return "a manifest without its own SKILL.md"
    if total > MCP_SKILL_MAX_BYTES:
        return f"a skill of {total} bytes, over the {MCP_SKILL_MAX_BYTES}-byte limit"
    return files


def _check_frontmatter(data: bytes, found: Published, where: str) -> None:
    """Refuse a SKILL.md whose frontmatter is not the one the listing gave."""
    from ..parse._frontmatter import split_frontmatter
    from ..parse._yaml12 import Yaml12Error, frontmatter_json, same_json

    try:
        split = split_frontmatter(data.decode("utf-8-sig"))
        served = frontmatter_json(split.frontmatter or "")
    except (UnicodeDecodeError, Yaml12Error) as exc:
        raise SkillIOError(f"Refused {where}: its frontmatter cannot be read ({exc}).") from exc
    if split.frontmatter is None or not same_json(served, found.frontmatter):
        raise SkillIOError(
            f"Refused {where}: its frontmatter differs from the one the server listed, "
            "so the skill is not what was announced."
        )
