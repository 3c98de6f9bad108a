"""HTTP for sites and archives: GET whole documents through the one install transport
(`_transport`: https rule, redirects, timeouts, retries, size bound); OCI registries
have `_oci` over the same transport.

What is this module's own:

- **errors in its words**: a refused first URL is a `UsageError` (`check_url`), any
  other failure a `FetchError` naming the URL (and the HTTP status when there was one);
- **404/410** as "missing" when the caller says that is fine (an index tried at two
  paths);
- **ETag reuse** for documents fetched with `cache=True` (index files): the body is
  kept under the cache dir and a `304 Not Modified` answer reuses it.

httpx is the `install` extra; without it a `UsageError` says how to install it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from .._errors import SkillIOError, UsageError
from ._transport import (
    RETRY_STATUS,
    Fetched,
    ProgressHook,
    Transport,
    TransportFailure,
    describe,
    refused_words,
    url_allowed,
)
from ._values import Limits

__all__ = ["FetchError", "Fetched", "Fetcher", "ProgressHook", "check_url"]

_MISSING_STATUS = frozenset({404, 410})


class FetchError(SkillIOError):
    """A download failed; `status` is the HTTP status when there was an answer."""

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


def check_url(url: str) -> None:
    """Refuse any URL but https (or http on a loopback host).

    Raises:
        UsageError: the scheme is not allowed, with the fix.
    """
    if not url_allowed(url):
        raise UsageError(f"Refusing to fetch {url}: {refused_words()}")


class Fetcher:
    """One transport for a whole install (connections are reused)."""

    def __init__(
        self,
        *,
        limits: Limits,
        progress: ProgressHook | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.limits = limits
        self.cache_dir = cache_dir
        self._transport = Transport(limits=limits, progress=progress)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(
        self, url: str, *, max_bytes: int, cache: bool = False, missing_ok: bool = False
    ) -> Fetched | None:
        """GET `url` whole, within `max_bytes`.

        Returns:
            The body, or None for a 404/410 when `missing_ok`.

        Raises:
            UsageError: a URL that is not https/loopback.
            FetchError: no answer after the retries, an error status, too large, a
                redirect to a refused address, or the deadline passed.
        """
        check_url(url)
        cached = self._cached(url) if cache else None
        headers = {"If-None-Match": cached[0]} if cached else {}
        try:
            answer = self._transport.send("GET", url, headers=headers, max_bytes=max_bytes)
        except TransportFailure as failure:
            raise _fetch_error(url, failure) from None
        status = answer.status
        if status == 304 and cached is not None:
            return cached[1]
        if status in _MISSING_STATUS:
            if missing_ok:
                return None
            raise FetchError(
                f"{url} does not exist (HTTP 404). Check the address; the site may "
                "have removed or renamed it.",
                url=url,
                status=404,
            )
        if status in RETRY_STATUS:
            raise FetchError(
                f"Cannot download {url}: HTTP {status} (tried {self.limits.retries + 1} "
                "times). Check the address and your network, then retry.",
                url=url,
                status=status,
            )
        if status >= 300 or status < 200:
            raise FetchError(
                f"{url} answered HTTP {status}. Check the address and whether the server "
                "needs credentials.",
                url=url,
                status=status,
            )
        if cache:
            self._store(url, answer)
        return answer

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


def _fetch_error(url: str, failure: TransportFailure) -> FetchError:
    if failure.kind != "unreachable":  # too large, or a redirect to a refused address
        return FetchError(str(failure), url=url)
    tries = f" (tried {failure.tries} times)" if failure.tries > 1 else ""
    return FetchError(
        f"Cannot download {url}: {describe(failure.cause)}{tries}. Check the address and "
        "your network, then retry.",
        url=url,
    )
