"""The one HTTP transport of installs, over httpx: what `_http.Fetcher` (sites,
archives) and `_oci.OciClient` (registries) both send through.

- **URLs**: https only, except plain http to a loopback host (`_httpguard.is_loopback`,
  the project's one loopback rule) or to a host the caller named `insecure`; checked on
  every request, redirects and follow-up URLs included.
- **Credentials** go only to the origin (scheme, host, port) they were given for: the
  caller passes an `Authorization` value with its origin, and a request elsewhere
  (an upload `Location`, a redirect to blob storage) is sent without it.
- **Redirects**: followed, at most 5, each checked as above (httpx drops
  `Authorization` when a redirect changes origin).
- **Timeouts** for connecting and between bytes, plus a whole-request deadline (a
  server that trickles one byte at a time still ends).
- **Retries**: connection errors, timeouts and the statuses in `RETRY_STATUS`, at most
  `Limits.retries` more times, waiting `backoff(attempt)` (or a small `Retry-After`).
- **A size bound** per answer: a declared `Content-Length` over it is refused before
  reading, and reading stops as soon as the body passes it (after content decoding,
  so a compressed bomb stops too).

Every failure is a `TransportFailure` with a `kind`; each caller turns it into its own
error (`FetchError`, `OciError`) with its own words.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from .._errors import SkillIOError, UsageError
from .._httpguard import is_loopback
from .._version import __version__
from ._values import Limits

if TYPE_CHECKING:
    import httpx

ProgressHook = Callable[[str, int, "int | None"], None]
"""Called as bytes arrive: (url, bytes so far, total bytes or None); (url, -1, None) ends."""

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
"""Answers worth another attempt (after `backoff`)."""
MAX_REDIRECTS = 5
ERROR_BODY_BYTES = 64 * 1024
"""How much of an error answer (or a HEAD's) is read: enough for a registry's codes."""
_CHUNK = 64 * 1024

FailureKind = Literal["refused-url", "unreachable", "too-large"]


class TransportFailure(SkillIOError):
    """A request failed before an answer could be used (each caller words it).

    `kind`: `refused-url` (a URL or a redirect breaks the https rule; `redirect` says
    which), `unreachable` (no answer after `tries`: a connection error, a timeout or the
    deadline), `too-large` (over the bound)."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        url: str,
        tries: int = 1,
        cause: BaseException | None = None,
        redirect: bool = False,
        limit: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.url = url
        self.tries = tries
        self.cause = cause
        self.redirect = redirect
        self.limit = limit
        """The bound a `too-large` answer passed."""

    @property
    def connect(self) -> bool:
        """True when the last try could not connect at all."""
        return "Connect" in type(self.cause).__name__

    @property
    def timed_out(self) -> bool:
        """True when the last try ran out of time (a timeout or the deadline)."""
        return isinstance(self.cause, _Slow) or "Timeout" in type(self.cause).__name__


@dataclass(frozen=True, kw_only=True, slots=True)
class Fetched:
    """An answer that arrived whole and within its bound."""

    url: str
    """The final URL (after redirects)."""
    body: bytes
    status: int = 200
    content_type: str = ""
    """The `Content-Type` (for an OCI manifest: its media type)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The answer's headers, names lowercased."""
    etag: str | None = None
    """The response's ETag, when it sent one."""
    from_cache: bool = False
    """True when a `304 Not Modified` let the cached copy serve (`_http`)."""
    digest: str | None = None
    """The verified digest of `body`, when the caller checked one (`_oci`)."""

    @property
    def checked_digest(self) -> str:
        """`digest`, for an answer whose caller always sets it (an OCI manifest).

        Raises:
            ValueError: no digest was checked (a caller's mistake, never the network's).
        """
        if self.digest is None:
            raise ValueError(f"{self.url}: no digest was checked for this answer")
        return self.digest


def require_httpx() -> Any:
    """The httpx module, or a `UsageError` naming the extra to install."""
    try:
        import httpx
    except ImportError:
        raise UsageError(
            "Installing from a URL needs httpx, which is not installed. Run "
            "`pip install 'skillpack[install]'` and retry."
        ) from None
    return httpx


def url_allowed(url: str, insecure: frozenset[str] = frozenset()) -> bool:
    """Whether `url` may be requested: https, or http on a loopback host or on a
    `host[:port]` in `insecure`."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        netloc = parts.netloc.rpartition("@")[2].lower()
    except ValueError:
        return False
    if not host:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and (is_loopback(host) or netloc in insecure)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the default port filled in: what credentials are scoped to."""
    parts = urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def backoff(attempt: int, retry_after: float = 0.0) -> float:
    """Seconds to wait before retry number `attempt + 1` (0.25, 0.5, 1, … at most 5)."""
    return min(retry_after or 0.25 * 2**attempt, 5.0)


def retry_after(headers: Mapping[str, str]) -> float:
    """A `Retry-After` of at most 5 seconds, else 0 (longer waits are not honoured)."""
    value = headers.get("retry-after", "")
    return float(value) if value.isdigit() and int(value) <= 5 else 0.0


class Transport:
    """One httpx client (connections reused) with the rules above."""

    def __init__(
        self,
        *,
        limits: Limits,
        insecure: frozenset[str] = frozenset(),
        verify: bool = True,
        progress: ProgressHook | None = None,
    ) -> None:
        lib = require_httpx()
        self.limits = limits
        self.insecure = insecure
        self.progress = progress
        self._client: httpx.Client = lib.Client(
            timeout=lib.Timeout(limits.timeout, connect=min(limits.timeout, 10.0)),
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
            verify=verify,
            headers={"User-Agent": f"skillpack/{__version__}"},
            event_hooks={"request": [self._check_redirect]},
        )

    def close(self) -> None:
        self._client.close()

    def _check_redirect(self, request: httpx.Request) -> None:
        # `send` checked the URL it was given; this sees the redirects too.
        url = str(request.url)
        if not url_allowed(url, self.insecure):
            raise TransportFailure(
                f"A redirect led to {url}, which is refused: {refused_words()}",
                kind="refused-url",
                url=url,
                redirect=True,
            )

    def send(
        self,
        method: str,
        url: str,
        *,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        authorization: tuple[str, str] | None = None,
        fail_fast_on_connect: bool = False,
    ) -> Fetched:
        """Send one request (retried as the rules say); the answer, whatever its status.

        Args:
            max_bytes: the bound on a 2xx body (an error answer is read to
                `ERROR_BODY_BYTES`, a HEAD's not at all past it).
            authorization: (origin URL, `Authorization` value): sent only when `url`
                is on that origin.
            fail_fast_on_connect: give up at once when the first try cannot connect
                (the caller has another address to try).

        Raises:
            TransportFailure: see its `kind`.
        """
        if not url_allowed(url, self.insecure):
            raise TransportFailure(
                f"Refusing to fetch {url}: {refused_words()}", kind="refused-url", url=url
            )
        sent = dict(headers or {})
        if authorization is not None and origin(url) == origin(authorization[0]):
            sent["Authorization"] = authorization[1]
        lib = require_httpx()
        attempt = 0
        while True:
            try:
                answer = self._once(method, url, sent, content, max_bytes)
            except (lib.HTTPError, lib.InvalidURL, _Slow) as error:
                retryable = isinstance(error, lib.TransportError | _Slow)
                connect = isinstance(error, lib.ConnectError)
                if (
                    not retryable
                    or attempt >= self.limits.retries
                    or (fail_fast_on_connect and connect)
                ):
                    raise TransportFailure(
                        f"Cannot reach {url}: {describe(error)}",
                        kind="unreachable",
                        url=url,
                        tries=attempt + 1,
                        cause=error,
                    ) from None
            else:
                if answer.status not in RETRY_STATUS or attempt >= self.limits.retries:
                    return answer
                time.sleep(backoff(attempt, retry_after(answer.headers)))
                attempt += 1
                continue
            time.sleep(backoff(attempt))
            attempt += 1

    def _once(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | None,
        max_bytes: int,
    ) -> Fetched:
        deadline = time.monotonic() + max(60.0, 10 * self.limits.timeout)
        with self._client.stream(method, url, headers=headers, content=content) as response:
            status = response.status_code
            answer = {key.lower(): value for key, value in response.headers.items()}
            if status < 200 or status >= 300 or method == "HEAD":
                body = read_bounded(response, url, ERROR_BODY_BYTES, deadline, strict=False)
            else:
                declared = answer.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise too_large(url, max_bytes)
                total = int(declared) if declared.isdigit() else None
                body = read_bounded(
                    response,
                    url,
                    max_bytes,
                    deadline,
                    strict=True,
                    progress=self.progress,
                    total=total,
                )
            return Fetched(
                url=str(response.url),
                body=body,
                status=status,
                content_type=answer.get("content-type", ""),
                headers=answer,
                etag=answer.get("etag"),
            )


def read_bounded(
    response: httpx.Response,
    url: str,
    max_bytes: int,
    deadline: float,
    *,
    strict: bool,
    progress: ProgressHook | None = None,
    total: int | None = None,
) -> bytes:
    """The body of `response`, read no further than `max_bytes` past which it is
    refused (`strict`) or cut; a body still arriving at `deadline` is given up
    (`url` names it in messages and to `progress`)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            if strict:
                raise too_large(url, max_bytes)
            chunks.append(chunk[: max_bytes - (size - len(chunk))])
            break
        if time.monotonic() > deadline:
            raise _Slow("the download took too long")
        chunks.append(chunk)
        if progress is not None:
            progress(url, size, total)
    if progress is not None:
        progress(url, -1, None)
    return b"".join(chunks)


def refused_words() -> str:
    """Why a URL is refused and what to do instead."""
    return (
        "only https URLs are allowed (plain http only on localhost/127.0.0.1 or a "
        "registry named with --insecure), so that what is installed cannot be altered "
        "in transit and no credential crosses the network in the clear. Use the https "
        "address."
    )


def too_large(url: str, max_bytes: int) -> TransportFailure:
    return TransportFailure(
        f"{url} is larger than the {max_bytes}-byte limit for one download; it was not installed.",
        kind="too-large",
        url=url,
        limit=max_bytes,
    )


def describe(error: BaseException | None) -> str:
    """A few words for a transport error (never a secret: httpx names no credentials)."""
    if error is None:
        return "no answer"
    name = type(error).__name__
    if "Timeout" in name:
        return "the server did not answer in time"
    if "Connect" in name:
        return f"cannot connect ({error})"
    return str(error) or name


class _Slow(Exception):
    """The whole-request deadline passed while the body arrived."""
