"""HTTP for installs, through httpx: the network seam (OCI registries have `_oci`).

- **https only**, except loopback hosts (`localhost`, `127.0.0.0/8`, `::1`), checked
  on every request including redirects;
- **timeouts** for connecting and between bytes, plus a whole-request deadline (a
  server that trickles one byte at a time still ends);
- **bounded retries** (connection errors, timeouts, 429 and 5xx) with a short
  backoff that honours a small `Retry-After`;
- **a size cap** per response, checked against `Content-Length` and while reading
  (after content decoding, so a compressed bomb stops too);
- **ETag reuse** for documents fetched with `cache=True` (index files): the body is
  kept under the cache dir and a `304 Not Modified` answer reuses it.

httpx is the `install` extra; without it a `UsageError` says how to install it.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._errors import SkillIOError, UsageError
from .._version import __version__
from ._values import Limits

if TYPE_CHECKING:
    import httpx

ProgressHook = Callable[[str, int, "int | None"], None]
"""Called as bytes arrive: (url, bytes so far, total bytes or None); (url, -1, None) ends."""

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_MISSING_STATUS = frozenset({404, 410})
_CHUNK = 64 * 1024


class FetchError(SkillIOError):
    """A download failed; `status` is the HTTP status when there was an answer."""

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


@dataclass(frozen=True, kw_only=True, slots=True)
class Fetched:
    """A response body that arrived whole and within the cap."""

    url: str
    """The final URL (after redirects)."""
    body: bytes
    content_type: str
    etag: str | None = None
    """The response's ETag, when it sent one."""
    from_cache: bool = False
    """True when a `304 Not Modified` let the cached copy serve."""


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


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (the only hosts plain http may use)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> None:
    """Refuse any URL but https (or http on a loopback host).

    Raises:
        UsageError: the scheme is not allowed, with the fix.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise UsageError(f"{url!r} is not a valid URL.") from None
    if parts.scheme == "https" and host:
        return
    if parts.scheme == "http" and host and is_loopback(host):
        return
    raise UsageError(
        f"Refusing to fetch {url}: only https URLs are allowed (plain http only on "
        "localhost/127.0.0.1), so that what is installed cannot be altered in transit. "
        "Use the https address of the site."
    )


class Fetcher:
    """One httpx client for a whole install (connections are reused)."""

    def __init__(
        self,
        *,
        limits: Limits,
        progress: ProgressHook | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        lib = require_httpx()
        self.limits = limits
        self.progress = progress
        self.cache_dir = cache_dir
        self._client: httpx.Client = lib.Client(
            timeout=lib.Timeout(limits.timeout, connect=min(limits.timeout, 10.0)),
            follow_redirects=True,
            max_redirects=5,
            headers={"User-Agent": f"skillpack/{__version__}"},
            event_hooks={"request": [self._check_request]},
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _check_request(request: httpx.Request) -> None:
        # `get` checked the URL it was given; this sees the redirects.
        url = str(request.url)
        try:
            check_url(url)
        except UsageError as error:
            raise FetchError(f"A redirect led to a refused address. {error}", url=url) from None

    def get(
        self, url: str, *, max_bytes: int, cache: bool = False, missing_ok: bool = False
    ) -> Fetched | None:
        """GET `url` whole, within `max_bytes`.

        Returns:
            The body, or None for a 404/410 when `missing_ok`.

        Raises:
            UsageError: a URL (or a redirect) that is not https/loopback.
            FetchError: no answer after the retries, an error status, too large, or
                the deadline passed.
        """
        check_url(url)
        cached = self._cached(url) if cache else None
        lib = require_httpx()
        attempt = 0
        while True:
            headers = {"If-None-Match": cached[0]} if cached else {}
            try:
                result = self._once(url, headers, max_bytes, cached)
            except (lib.HTTPError, lib.InvalidURL, _Retry) as error:
                retryable = isinstance(error, lib.TransportError | _Retry)
                if not retryable or attempt >= self.limits.retries:
                    tries = f" (tried {attempt + 1} times)" if retryable else ""
                    raise FetchError(
                        f"Cannot download {url}: {_describe(error)}{tries}. Check the address "
                        "and your network, then retry.",
                        url=url,
                        status=getattr(error, "status", None),
                    ) from None
                time.sleep(min(getattr(error, "wait", 0.0) or 0.25 * 2**attempt, 5.0))
                attempt += 1
                continue
            if result is None:
                if missing_ok:
                    return None
                raise FetchError(
                    f"{url} does not exist (HTTP 404). Check the address; the site may "
                    "have removed or renamed it.",
                    url=url,
                    status=404,
                )
            if cache and not result.from_cache:
                self._store(url, result)
            return result

    def _once(
        self,
        url: str,
        headers: dict[str, str],
        max_bytes: int,
        cached: tuple[str, Fetched] | None,
    ) -> Fetched | None:
        deadline = time.monotonic() + max(60.0, 10 * self.limits.timeout)
        with self._client.stream("GET", url, headers=headers) as response:
            status = response.status_code
            if status == 304 and cached is not None:
                return cached[1]
            if status in _MISSING_STATUS:
                return None
            if status in _RETRY_STATUS:
                raise _Retry(f"HTTP {status}", status, _retry_after(response.headers))
            if status >= 400 or status < 200:
                raise FetchError(
                    f"{url} answered HTTP {status} {response.reason_phrase}. Check the "
                    "address and whether the server needs credentials.",
                    url=url,
                    status=status,
                )
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(url, max_bytes)
            chunks: list[bytes] = []
            size = 0
            total = int(declared) if declared and declared.isdigit() else None
            for chunk in response.iter_bytes(_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise _too_large(url, max_bytes)
                if time.monotonic() > deadline:
                    raise _Retry("the download took too long", None, 0.0)
                chunks.append(chunk)
                if self.progress is not None:
                    self.progress(url, size, total)
            if self.progress is not None:
                self.progress(url, -1, None)
            return Fetched(
                url=str(response.url),
                body=b"".join(chunks),
                content_type=response.headers.get("Content-Type", ""),
                etag=response.headers.get("ETag"),
            )

    # --- the ETag cache ------------------------------------------------------------

    def _cache_file(self, url: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / (hashlib.sha256(url.encode("utf-8")).hexdigest()[:40] + ".json")

    def _cached(self, url: str) -> tuple[str, Fetched] | None:
        path = self._cache_file(url)
        try:
            if path is None:
                return None
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("url") != url or not isinstance(data.get("etag"), str):
                return None
            body = data["body"].encode("utf-8")
            fetched = Fetched(
                url=data["final_url"],
                body=body,
                content_type=data.get("content_type", ""),
                etag=data["etag"],
                from_cache=True,
            )
            return data["etag"], fetched
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # the cache is never the source of truth

    def _store(self, url: str, fetched: Fetched) -> None:
        path = self._cache_file(url)
        if path is None or fetched.etag is None:
            return
        try:
            body = fetched.body.decode("utf-8")
        except UnicodeDecodeError:
            return
        record = {
            "url": url,
            "final_url": fetched.url,
            "etag": fetched.etag,
            "content_type": fetched.content_type,
            "body": body,
        }
        # Replaced whole (never read half-written), but not fsynced: a cache.
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                temp.unlink()


class _Retry(Exception):
    def __init__(self, message: str, status: int | None, wait: float) -> None:
        super().__init__(message)
        self.status = status
        self.wait = wait


def _retry_after(headers: Any) -> float:
    value = headers.get("Retry-After", "")
    return float(value) if value.isdigit() and int(value) <= 5 else 0.0


def _too_large(url: str, max_bytes: int) -> FetchError:
    return FetchError(
        f"{url} is larger than the {max_bytes}-byte limit for one download; it was not installed.",
        url=url,
    )


def _describe(error: BaseException) -> str:
    name = type(error).__name__
    if "Timeout" in name:
        return "the server did not answer in time"
    if "Connect" in name:
        return f"cannot connect ({error})"
    return str(error) or name
