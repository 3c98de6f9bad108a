"""The one HTTP guard of `skillpack mcp --transport http` and `skillpack serve --transport http`.

Both servers answer the same way, in this order:

1. **Host** must name the bound address or a loopback name (`127.0.0.1`, `localhost`,
   `[::1]`), any port, or a name the server was told a balancer or proxy forwards
   (`--allowed-host HOST[:PORT]`, that port only when given): anything else is **421**
   (a page that rebinds its own DNS name to 127.0.0.1 sends its own name).
2. **Origin**, when present, must be `http(s)://` one of those hosts (or an origin the
   server was told to allow): else **403**.
3. **Bearer token**, when the server has one, compared in constant time: else **401**.

Connections: a connection that has not yet sent a whole request head within
`HEADER_SECONDS` is closed (however it drip-feeds it), and so is a request whose body
has not all arrived `BODY_SECONDS` after its head (`Deadlines`; both set otherwise for
one server through `SKILLPACK_HTTP_DEADLINES`, `deadline_seconds`); at most `PENDING_MAX`
connections waiting for a head are kept, and a new one closes the oldest waiting one,
so idle or slow connections without a request cannot take the places of clients that
send one; the connection limit never exceeds
what the process's open-file limit leaves after `RESERVED_FILES`.

`is_loopback` is the one loopback test: `localhost` (any case) and IP literals of the
loopback ranges, bracketed or not, in any form the C library accepts (`127.1`); other
names are not loopback (no DNS: a name's answer can change).

A pure-stdlib base module, so the `mcp` and `rpc` layers share it without importing
each other.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import ipaddress
import logging
import math
import os
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "::1")
HEADER_SECONDS: Final = 10.0
"""A connection has this long to send a request head (and again after each reply)."""
BODY_SECONDS: Final = 10.0
"""A request has this long after its head to send its whole body (the Content-Length
it promised); then its connection is closed."""
DEADLINES_ENV: Final = "SKILLPACK_HTTP_DEADLINES"
"""`HEAD,BODY` in seconds: the two deadlines above for a server started with it set
(the tests of the deadlines wait one second, not ten; an operator may lengthen them
for clients on a slow link)."""
PENDING_MAX: Final = 64
"""Connections waiting for their request head; one more closes the oldest of them."""
RESERVED_FILES: Final = 64
"""Open files kept for the index, the watcher, skill files and the workers: the
connection limit is at most the process's open-file limit minus these."""
EPISODE_QUIET_SECONDS: Final = 30.0
"""A repeated condition (out of file handles, sessions full) is one episode until it
has not been seen for this long: one log line each."""


def deadline_seconds(environ: Mapping[str, str] | None = None) -> tuple[float, float]:
    """The (head, body) deadlines of a server starting now: `HEADER_SECONDS` and
    `BODY_SECONDS`, unless `SKILLPACK_HTTP_DEADLINES` sets them.

    Raises:
        ValueError: the variable is not two positive numbers of seconds.
    """
    value = (os.environ if environ is None else environ).get(DEADLINES_ENV, "").strip()
    if not value:
        return HEADER_SECONDS, BODY_SECONDS
    parts = value.split(",")
    try:
        head, body = (float(part) for part in parts)
    except ValueError:
        head = body = math.nan
    if not (0 < head < math.inf and 0 < body < math.inf):
        raise ValueError(
            f"{DEADLINES_ENV}={value!r} is not two positive numbers of seconds: write "
            f"HEAD,BODY (the defaults are {HEADER_SECONDS:g},{BODY_SECONDS:g}), or unset it."
        )
    return head, body


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address literal) is this machine only."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    if ":" in name or not name:
        return False
    try:
        packed = socket.inet_aton(name)  # 127.1, 2130706433: what bind() accepts
    except OSError:
        return False
    return ipaddress.IPv4Address(packed).is_loopback


def split_host(value: str) -> tuple[str, str] | None:
    """(host, port) of a `Host` header value, host lowercased, brackets dropped;
    None when it is malformed."""
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:]
    else:
        host, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    if not host:
        return None
    return host.lower(), port


def parse_allowed_host(value: str) -> tuple[str, str]:
    """(host, port) of an `--allowed-host HOST[:PORT]` value (port "" when absent).

    Raises:
        ValueError: the value is not a host name with an optional numeric port.
    """
    parts = split_host(value.strip())
    if parts is None or any(c.isspace() or c in "/@?#" for c in parts[0]):
        raise ValueError(
            f"--allowed-host {value!r} is not HOST or HOST:PORT (e.g. lb.internal or "
            "lb.internal:8080; an IPv6 address in brackets)."
        )
    return parts


def allowed_hosts(bound: str) -> frozenset[str]:
    """Host names a request may name: the loopback names and the bound address."""
    names = {*LOOPBACK_NAMES, bound.strip("[]").lower()}
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(names)


class HostGuard:
    """The Host, Origin and bearer checks (module docstring), as (status, message).

    `port`, when given, is the port a Host or Origin must name (None: any port).
    `forwarded` are the `--allowed-host` values (`parse_allowed_host`): names a
    balancer or proxy sends, each with the port it must name ("" for any).
    """

    def __init__(
        self,
        bound: str,
        *,
        token: str | None,
        port: int | None = None,
        allow_origins: Iterable[str] = (),
        forwarded: Iterable[str] = (),
    ) -> None:
        self.hosts = allowed_hosts(bound)
        self.forwarded = frozenset(parse_allowed_host(value) for value in forwarded)
        self.port = port
        self.extra_origins = frozenset(o.rstrip("/") for o in allow_origins)
        self._expected = token.encode() if token else None

    def check(
        self, host: str | None, origin: str | None, authorization: str | None
    ) -> tuple[int, str] | None:
        """None when the request may pass; else the refusal's status and message."""
        refused = self.place_check(host, origin)
        if refused is not None:
            return refused
        if not self.token_ok(authorization):
            return 401, (
                "Missing or wrong bearer token: send 'Authorization: Bearer <token>' with "
                "the server's token."
            )
        return None

    def place_check(self, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """The Host and Origin checks alone (what `/healthz` and `/readyz` pass): None
        when they pass; else the refusal's status and message."""
        if not self.host_ok(host or ""):
            names = sorted(self.hosts | {h for h, _ in self.forwarded})
            return 421, (
                f"Host {host!r} is not this server: requests must name "
                f"{' or '.join(names)} (others are refused against DNS rebinding; "
                "name a balancer's or proxy's host with --allowed-host)."
            )
        if origin is not None and not self.origin_ok(origin):
            return 403, (
                f"Origin {origin!r} may not call this server: only pages served from "
                "this server's own host may."
            )
        return None

    def host_ok(self, value: str) -> bool:
        parts = split_host(value)
        if parts is None:
            return False
        if parts in self.forwarded or (parts[0], "") in self.forwarded:
            return True
        if parts[0] not in self.hosts:
            return False
        return self.port is None or parts[1] == str(self.port)

    def origin_ok(self, origin: str) -> bool:
        if origin.rstrip("/") in self.extra_origins:
            return True
        try:
            parts = urlsplit(origin)
            port = parts.port  # raises ValueError for a port that is not a number
        except ValueError:
            return False
        if parts.scheme not in ("http", "https"):
            return False
        name = parts.hostname or ""
        if (name, "") in self.forwarded or (name, str(port or "")) in self.forwarded:
            return True
        if name not in self.hosts:
            return False
        return self.port is None or port == self.port

    def token_ok(self, authorization: str | None) -> bool:
        if self._expected is None:
            return True
        scheme, _, given = (authorization or "").partition(" ")
        # compare_digest always runs, so a wrong scheme costs the same as a wrong token.
        same = hmac.compare_digest(given.strip().encode("utf-8", "replace"), self._expected)
        return same and scheme.lower() == "bearer"


def connection_limit(wanted: int) -> int:
    """`wanted`, lowered so that open connections never exhaust the open-file limit."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, int(soft) - RESERVED_FILES))


class PendingConnections:
    """Connections that have not sent a request head yet, oldest first (thread-safe).

    `add` registers one with the function that closes it; past `most`, the oldest
    waiting connection is closed. `done` removes one (its head arrived, or it closed).
    """

    def __init__(self, most: int = PENDING_MAX) -> None:
        self.most = most
        self._waiting: OrderedDict[object, Callable[[], None]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, key: object, close: Callable[[], None]) -> None:
        evicted: list[Callable[[], None]] = []
        with self._lock:
            self._waiting[key] = close
            while len(self._waiting) > self.most:
                _key, oldest = self._waiting.popitem(last=False)
                evicted.append(oldest)
        for close_one in evicted:
            with contextlib.suppress(Exception):
                close_one()

    def done(self, key: object) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    def __len__(self) -> int:
        return len(self._waiting)


class Deadlines:
    """Connections that must send something (a head, a body) by a time, each closed
    when its time passes; one daemon thread watches all of them (thread-safe).

    `set` gives a connection a deadline (replacing any it had) and the function that
    closes it; `clear` removes it (what it had to send arrived, or it closed).
    """

    def __init__(self, *, tick: float = 0.25, clock: Callable[[], float] = time.monotonic) -> None:
        self.tick = tick
        self.clock = clock
        self._due: dict[object, tuple[float, Callable[[], None]]] = {}
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    def set(self, key: object, seconds: float, close: Callable[[], None]) -> None:
        with self._lock:
            self._due[key] = (self.clock() + seconds, close)
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch, name="skillpack-deadlines", daemon=True
                )
                self._watcher.start()

    def clear(self, key: object) -> None:
        with self._lock:
            self._due.pop(key, None)

    def expire(self) -> int:
        """Close every connection past its deadline now; how many were closed."""
        now = self.clock()
        with self._lock:
            late = [key for key, (when, _close) in self._due.items() if when <= now]
            closes = [self._due.pop(key)[1] for key in late]
        for close in closes:
            with contextlib.suppress(Exception):
                close()
        return len(closes)

    def __len__(self) -> int:
        return len(self._due)

    def _watch(self) -> None:
        while True:
            time.sleep(self.tick)
            self.expire()


NO_HANDLES: Final = (errno.EMFILE, errno.ENFILE)


def client_left(record: logging.LogRecord) -> bool:
    """Whether a log record is about a client that closed its connection mid-request."""
    exc = record.exc_info[1] if record.exc_info else None
    return exc is not None and type(exc).__name__ in ("ClientDisconnect", "ConnectionResetError")


def out_of_handles(record: logging.LogRecord) -> bool:
    """Whether a log record reports the process out of file handles."""
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, OSError) and exc.errno in NO_HANDLES:
        return True
    return "Too many open files" in record.getMessage()


class Episodes:
    """Which sightings of a repeated condition begin an episode (thread-safe): the
    first, and any after the condition went unseen for `quiet` seconds."""

    def __init__(
        self, *, quiet: float = EPISODE_QUIET_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.quiet = quiet
        self.clock = clock
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def begins(self, kind: str) -> bool:
        """Note that `kind` was seen now; whether this sighting begins an episode."""
        now = self.clock()
        with self._lock:
            last = self._seen.get(kind)
            self._seen[kind] = now
        return last is None or now - last >= self.quiet


class EpisodeLog(logging.Filter):
    """One log line per episode of each repeated condition, never a traceback storm.

    `kinds` maps a condition's name to (a test of a record, the line logged for it). A
    matching record passes, rewritten to that line without its traceback, only when the
    condition was not seen in the last `quiet` seconds (`Episodes`); the rest of the
    episode is dropped. A condition whose line is None is never logged (a client that
    left mid-request is not worth a line). Other records pass untouched.
    """

    def __init__(
        self,
        kinds: dict[str, tuple[Callable[[logging.LogRecord], bool], str | None]],
        *,
        quiet: float = EPISODE_QUIET_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.kinds = kinds
        self.episodes = Episodes(quiet=quiet, clock=clock)

    def filter(self, record: logging.LogRecord) -> bool:
        for kind, (matches, line) in self.kinds.items():
            if not matches(record):
                continue
            if line is None or not self.episodes.begins(kind):
                return False
            record.msg, record.args = line, ()
            record.exc_info, record.exc_text, record.stack_info = None, None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            return True
        return True
