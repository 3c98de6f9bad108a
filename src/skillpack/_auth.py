"""Bearer JWTs for both HTTP servers: the OAuth 2.1 resource-server half of MCP auth.

`skillpack mcp --transport http` and `skillpack serve --transport http` check a request's
`Authorization: Bearer <jwt>` here when `[auth]` (or `--auth-jwks`, ...) is set:

- **Algorithms**: RS256 and ES256 only, pinned per key: `alg: none`, HMAC (a public
  key used as a shared secret) and any other algorithm are refused before a key is
  looked at, and a key is used only with the algorithm its type fits.
- **Keys** (`JwksKeys`): a JWKS file, or an `https://` URL (`http://` on a loopback
  host only) fetched with httpx: at most `JWKS_MAX_BYTES` within
  `JWKS_TIMEOUT_SECONDS`, kept `JWKS_TTL_SECONDS`, fetched again for a `kid` it does
  not hold (a key rotation), such refetches at most once per `JWKS_REFETCH_SECONDS`
  (so tokens with made-up `kid`s cannot make the server hammer the issuer). A failed
  fetch keeps the keys held.
- **Claims**: `iss` equal to the issuer, `aud` holding the audience, `exp` (and
  `nbf`, `iat` when present) within `LEEWAY_SECONDS`; `exp`, `iss` and `aud` are
  required. Required scopes (`scope` or `scp`, a space-separated string or a list)
  must all be there: else 403 `insufficient_scope`.
- **Answers** (RFC 6750, RFC 9728): no token is 401 `Bearer resource_metadata="..."`;
  a bad token adds `error="invalid_token"` and why; both point at the protected
  resource metadata, served at `METADATA_PATH` and its path-suffixed forms
  (`metadata_document`).
- **Audit** (`audit`): one JSON line per request on the `skillpack.audit` logger at
  info level (`sub`, the method or tool, the skill), never the token.

`BearerAuth` is what a server holds: the verifier and its endpoint's metadata.
`mcp._auth` adapts it to the MCP python SDK's `TokenVerifier` seam. A base module:
the crypto (PyJWT with `cryptography`) and httpx load only when a server uses auth
(`pip install 'skillpack[auth]'`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from ._errors import UsageError
from ._httpguard import is_loopback

ALGORITHMS: Final = ("RS256", "ES256")
"""The signature algorithms accepted; each fits one key type (`_KEY_FITS`)."""
LEEWAY_SECONDS: Final = 30
"""Clock skew allowed on `exp`, `nbf` and `iat`."""
JWKS_MAX_BYTES: Final = 256 * 1024
JWKS_MAX_KEYS: Final = 100
JWKS_TIMEOUT_SECONDS: Final = 5.0
JWKS_TTL_SECONDS: Final = 300.0
"""A fetched key set is used this long; the next request after it fetches it again."""
JWKS_REFETCH_SECONDS: Final = 10.0
"""A token naming a `kid` the set lacks fetches the set again at most this often."""
METADATA_PATH: Final = "/.well-known/oauth-protected-resource"
AUDIT_LOGGER: Final = "skillpack.audit"
"""The logger of the audit lines (info level, one JSON object per line)."""

_KEY_FITS: Final = {"RS256": ("RSA", None), "ES256": ("EC", "P-256")}
"""(kty, crv) of the keys each algorithm may be checked with."""

audit_log = logging.getLogger(AUDIT_LOGGER)


def require_auth() -> None:
    """Raise `UsageError` naming the extra when PyJWT or `cryptography` is missing."""
    try:
        import cryptography  # noqa: F401
        import jwt  # noqa: F401
    except ImportError as exc:
        raise UsageError(
            f"Checking bearer JWTs needs PyJWT and cryptography ({exc.name} is not "
            "installed): pip install 'skillpack[auth]'."
        ) from None


@dataclass(frozen=True, kw_only=True, slots=True)
class AuthSettings:
    """What a server checks tokens against (`[auth]` of the config, or the flags)."""

    jwks: str
    """The issuer's keys: an `https://` URL (`http://` on loopback only) or a file."""
    issuer: str
    """The `iss` every token must carry (the authorization server)."""
    audience: str
    """The `aud` every token must hold: this server's resource identifier."""
    required_scopes: tuple[str, ...] = ()
    leeway: int = LEEWAY_SECONDS

    @property
    def is_url(self) -> bool:
        return self.jwks.startswith(("https://", "http://"))

    def checked(self) -> AuthSettings:
        """These settings, or `UsageError` saying which one is unusable and how to fix it."""
        for name, value in (("jwks", self.jwks), ("issuer", self.issuer)):
            if not value.strip():
                raise UsageError(f"[auth] {name} is empty; set it (or --auth-{name}).")
        if not self.audience.strip():
            raise UsageError(
                "[auth] audience is empty; set it (or --auth-audience) to this server's "
                "resource identifier, the `aud` its tokens carry."
            )
        if self.jwks.startswith("http://"):
            host = urlsplit(self.jwks).hostname or ""
            if not is_loopback(host):
                raise UsageError(
                    f"The JWKS URL {self.jwks} is plain http on a host that is not this "
                    "machine; use its https:// URL (keys fetched in the clear can be "
                    "swapped on the way)."
                )
        return self


@dataclass(frozen=True, kw_only=True, slots=True)
class Principal:
    """Who a verified token speaks for."""

    subject: str | None
    """The token's `sub`."""
    client_id: str
    """`client_id` (RFC 9068), else `azp`, else `appid` (Entra v1), else `sub`."""
    scopes: tuple[str, ...]
    claims: Mapping[str, Any] = field(default_factory=dict)
    expires_at: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Caller:
    """Who an admitted request speaks for, and what it may see."""

    principal: Principal
    grant: Any
    """The `select._grants.SkillGrant` its claims open; None: every skill."""


class AuthRefused(Exception):
    """A request without a usable token: its HTTP status and the challenge's parts."""

    def __init__(self, status: int, code: str, message: str, *, error: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        """Stable: `token-missing`, `token-invalid`, `token-expired`, `scope-missing`."""
        self.error = error
        """RFC 6750's `error`: None (no token sent), `invalid_token`, `insufficient_scope`."""


class FetchNeeded(Exception):
    """`verify(fetch=False)` would have to fetch the key set first."""


@dataclass(frozen=True, kw_only=True, slots=True)
class _Key:
    kid: str | None
    kty: str
    crv: str | None
    key: Any


class JwksKeys:
    """The issuer's keys, read from a file or fetched from a URL (thread-safe).

    `fetches` counts the fetches of a URL (the tests watch it).
    """

    def __init__(self, source: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.is_url = source.startswith(("https://", "http://"))
        self.clock = clock
        self.fetches = 0
        self._keys: tuple[_Key, ...] = ()
        self._fetched_at = float("-inf")
        self._refetched_at = float("-inf")
        self._lock = threading.Lock()
        self._fetching = threading.Lock()

    def load(self) -> None:
        """Read or fetch the keys now.

        Raises:
            UsageError: the file or URL gives no usable key set (what and where).
        """
        with self._fetching:
            keys = self._read()
            with self._lock:
                self._keys, self._fetched_at = keys, self.clock()

    def find(self, kid: str | None, algorithm: str, *, fetch: bool = True) -> _Key | None:
        """The key for a token's `kid` that fits `algorithm`; fetched again when the
        set is stale, or lacks the `kid` and was not fetched in `JWKS_REFETCH_SECONDS`.

        Raises:
            FetchNeeded: `fetch` is False and a fetch is due.
        """
        if not self.is_url:
            return _pick(self._keys, kid, algorithm)
        found, due = self._lookup(kid, algorithm)
        if not due:
            return found
        if not fetch:
            raise FetchNeeded
        with self._fetching:
            found, due = self._lookup(kid, algorithm)  # another thread may have fetched
            if not due:
                return found
            try:
                fresh = self._read()
            except UsageError as exc:
                audit_log.warning(json.dumps({"event": "jwks-fetch-failed", "why": str(exc)}))
                fresh = None
            with self._lock:
                now = self.clock()
                self._fetched_at = now
                if found is None:
                    self._refetched_at = now
                if fresh is not None:
                    self._keys = fresh
        with self._lock:
            return _pick(self._keys, kid, algorithm)

    def _lookup(self, kid: str | None, algorithm: str) -> tuple[_Key | None, bool]:
        """(the key held for `kid`, whether the set must be fetched first): when it is
        stale, or lacks the `kid` and no refetch for a missing `kid` came lately."""
        with self._lock:
            keys, now = self._keys, self.clock()
            stale = now - self._fetched_at >= JWKS_TTL_SECONDS
            may_refetch = now - self._refetched_at >= JWKS_REFETCH_SECONDS
        found = _pick(keys, kid, algorithm)
        return found, stale or (found is None and may_refetch)

    def _read(self) -> tuple[_Key, ...]:
        data = self._fetch() if self.is_url else self._read_file()
        try:
            document = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"The JWKS at {self.source} is not JSON ({exc}).") from None
        return parse_jwks(document, where=self.source)

    def _read_file(self) -> bytes:
        try:
            with open(os.path.expanduser(self.source), "rb") as handle:
                data = handle.read(JWKS_MAX_BYTES + 1)
        except OSError as exc:
            raise UsageError(
                f"Cannot read the JWKS file {self.source}: {exc.strerror or exc}; give the "
                "issuer's key set (its jwks_uri document) as a file or an https URL."
            ) from None
        if len(data) > JWKS_MAX_BYTES:
            raise UsageError(f"The JWKS file {self.source} is over {JWKS_MAX_BYTES} bytes.")
        return data

    def _fetch(self) -> bytes:
        import httpx

        self.fetches += 1
        try:
            with (
                httpx.Client(timeout=JWKS_TIMEOUT_SECONDS, follow_redirects=False) as client,
                client.stream("GET", self.source, headers={"Accept": "application/json"}) as reply,
            ):
                if reply.status_code != 200:
                    raise UsageError(
                        f"Fetching the JWKS {self.source} answered HTTP {reply.status_code}; "
                        "check the URL (the issuer's jwks_uri)."
                    )
                deadline = time.monotonic() + JWKS_TIMEOUT_SECONDS
                data = bytearray()
                for chunk in reply.iter_bytes():
                    data += chunk
                    if len(data) > JWKS_MAX_BYTES:
                        raise UsageError(
                            f"The JWKS at {self.source} is over {JWKS_MAX_BYTES} bytes."
                        )
                    if time.monotonic() > deadline:
                        raise UsageError(
                            f"The JWKS at {self.source} took over {JWKS_TIMEOUT_SECONDS:g} s."
                        )
        except httpx.HTTPError as exc:
            raise UsageError(f"Cannot fetch the JWKS {self.source}: {exc}.") from None
        return bytes(data)


def parse_jwks(document: Any, *, where: str) -> tuple[_Key, ...]:
    """The signing keys of a JWK set that fit an accepted algorithm (others are skipped).

    Raises:
        UsageError: not a JWK set, or none of its keys can check RS256 or ES256.
    """
    from jwt import PyJWK
    from jwt.exceptions import PyJWKError

    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise UsageError(f"The JWKS at {where} is not a JWK set (an object with `keys`).")
    keys = []
    for entry in entries[:JWKS_MAX_KEYS]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kty, crv = entry.get("kty"), entry.get("crv")
        if not isinstance(kty, str) or (kty, crv) not in _KEY_FITS.values():
            continue
        try:
            algorithm = "RS256" if kty == "RSA" else "ES256"
            key = PyJWK(entry, algorithm=algorithm).key
        except (PyJWKError, ValueError, TypeError):
            continue
        kid = entry.get("kid")
        keys.append(_Key(kid=kid if isinstance(kid, str) else None, kty=kty, crv=crv, key=key))
    if not keys:
        raise UsageError(
            f"The JWKS at {where} holds no RSA or P-256 EC signing key; skillpack checks "
            "RS256 and ES256 tokens only."
        )
    return tuple(keys)


def _pick(keys: Sequence[_Key], kid: str | None, algorithm: str) -> _Key | None:
    kty, crv = _KEY_FITS[algorithm]
    fitting = [k for k in keys if k.kty == kty and k.crv == crv]
    if kid is None:
        return fitting[0] if len(fitting) == 1 else None
    return next((k for k in fitting if k.kid == kid), None)


class JwtVerifier:
    """Checks bearer JWTs against `AuthSettings` (module docstring); thread-safe."""

    def __init__(self, settings: AuthSettings, *, keys: JwksKeys | None = None) -> None:
        require_auth()
        self.settings = settings.checked()
        self.keys = keys if keys is not None else JwksKeys(settings.jwks)

    def verify(self, token: str, *, fetch: bool = True) -> Principal:
        """The principal of a valid token.

        Raises:
            AuthRefused: the token is not acceptable (why, as its `code` and message).
            FetchNeeded: `fetch` is False and the key set must be fetched first.
        """
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _invalid("token-invalid", "The bearer token is not a JWT.") from None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            raise _invalid(
                "token-invalid",
                f"The token's algorithm {str(algorithm)[:20]!r} is not accepted "
                f"(only {' and '.join(ALGORITHMS)}).",
            )
        kid = header.get("kid")
        key = self.keys.find(kid if isinstance(kid, str) else None, algorithm, fetch=fetch)
        if key is None:
            raise _invalid("token-invalid", "The token is not signed by a key of the issuer.")
        s = self.settings
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise _invalid("token-expired", "The token has expired.") from None
        except jwt.ImmatureSignatureError:
            raise _invalid("token-invalid", "The token is not valid yet (nbf).") from None
        except jwt.InvalidAudienceError:
            raise _invalid("token-invalid", "The token is for another audience.") from None
        except jwt.InvalidIssuerError:
            raise _invalid("token-invalid", "The token is from another issuer.") from None
        except jwt.InvalidSignatureError:
            raise _invalid("token-invalid", "The token's signature does not verify.") from None
        except jwt.PyJWTError as exc:
            raise _invalid("token-invalid", f"The token is not valid: {exc}.") from None
        scopes = token_scopes(claims)
        missing = [scope for scope in s.required_scopes if scope not in scopes]
        if missing:
            raise AuthRefused(
                403,
                "scope-missing",
                f"The token lacks the scope(s) {' '.join(missing)}.",
                error="insufficient_scope",
            )
        subject = claims.get("sub")
        client = claims.get("client_id") or claims.get("azp") or claims.get("appid") or subject
        expires = claims.get("exp")
        return Principal(
            subject=subject if isinstance(subject, str) else None,
            client_id=str(client or ""),
            scopes=scopes,
            claims=claims,
            expires_at=expires if isinstance(expires, int) else None,
        )

    async def verify_async(self, token: str) -> Principal:
        """`verify` on the event loop, moved to a worker thread only when the key set
        must be fetched (a network round trip must not hold up other requests)."""
        try:
            return self.verify(token, fetch=False)
        except FetchNeeded:
            import anyio.to_thread

            return await anyio.to_thread.run_sync(self.verify, token)


def _invalid(code: str, message: str) -> AuthRefused:
    return AuthRefused(401, code, message, error="invalid_token")


def token_scopes(claims: Mapping[str, Any]) -> tuple[str, ...]:
    """The scopes of `scope` or `scp`: a space-separated string or a list of strings."""
    found: list[str] = []
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.extend(value.split())
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    return tuple(dict.fromkeys(found))


def bearer_token(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header.

    Raises:
        AuthRefused: no header, another scheme, or an empty token (`token-missing`).
    """
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise AuthRefused(
            401,
            "token-missing",
            "This server needs a bearer token: send 'Authorization: Bearer <access "
            "token>' from the authorization server its metadata names.",
            error=None,
        )
    return token


def resource_metadata_url(audience: str, *, host: str, path: str) -> str:
    """Where a client finds this server's RFC 9728 metadata: beside the audience when
    it is a URL (`https://h/mcp` -> `https://h/.well-known/oauth-protected-resource/mcp`),
    else on the host the client called (this server speaks plain HTTP), suffixed
    with the endpoint's `path`."""
    if audience.startswith(("https://", "http://")):
        parts = urlsplit(audience)
        suffix = parts.path.rstrip("/")
        return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{suffix}"
    return f"http://{host}{METADATA_PATH}{path.rstrip('/')}"


def metadata_paths(endpoint: str, audience: str) -> frozenset[str]:
    """The paths the metadata document is served at: the root form, the endpoint's
    path-suffixed form, and the audience's when it is a URL."""
    paths = {METADATA_PATH, METADATA_PATH + endpoint.rstrip("/")}
    if audience.startswith(("https://", "http://")):
        paths.add(METADATA_PATH + urlsplit(audience).path.rstrip("/"))
    return frozenset(paths)


def metadata_document(settings: AuthSettings) -> dict[str, Any]:
    """The RFC 9728 protected resource metadata (empty fields left out)."""
    document: dict[str, Any] = {
        "resource": settings.audience,
        "authorization_servers": [settings.issuer],
        "bearer_methods_supported": ["header"],
        "resource_name": "skillpack",
    }
    if settings.required_scopes:
        document["scopes_supported"] = list(settings.required_scopes)
    return document


def challenge(refused: AuthRefused, *, metadata_url: str, scopes: Sequence[str] = ()) -> str:
    """The `WWW-Authenticate` value of a refusal (RFC 6750 §3, RFC 9728 §5.1)."""
    parts = []
    if refused.error is not None:
        parts.append(f'error="{refused.error}"')
        parts.append(f'error_description="{_quoted(str(refused))}"')
    if scopes:
        parts.append(f'scope="{_quoted(" ".join(scopes))}"')
    parts.append(f'resource_metadata="{_quoted(metadata_url)}"')
    return "Bearer " + ", ".join(parts)


class BearerAuth:
    """A server's bearer-JWT check: the verifier, and the metadata of its endpoint."""

    def __init__(self, verifier: JwtVerifier, *, endpoint: str) -> None:
        self.verifier = verifier
        self.settings = verifier.settings
        self.endpoint = endpoint
        self.paths = metadata_paths(endpoint, self.settings.audience)
        self.metadata = json.dumps(metadata_document(self.settings)).encode()

    def metadata_url(self, host: str | None) -> str:
        return resource_metadata_url(
            self.settings.audience, host=host or "127.0.0.1", path=self.endpoint
        )

    def challenge(self, refused: AuthRefused, host: str | None) -> str:
        """The `WWW-Authenticate` header of a refusal, for a request to `host`."""
        return challenge(
            refused, metadata_url=self.metadata_url(host), scopes=self.settings.required_scopes
        )

    def principal(self, authorization: str | None) -> Principal:
        """The principal of a request's `Authorization` header (may fetch keys).

        Raises:
            AuthRefused: no usable token.
        """
        return self.verifier.verify(bearer_token(authorization))

    async def principal_async(self, authorization: str | None) -> Principal:
        """`principal` for an event loop (`JwtVerifier.verify_async`)."""
        return await self.verifier.verify_async(bearer_token(authorization))


def _quoted(text: str) -> str:
    return "".join(c for c in text if c >= " " and c not in '"\\\x7f')


def audit(server: str, principal: Principal | None, **fields: Any) -> None:
    """One audit line: the server, who (`sub`, `client`), then `fields` (the method,
    tool, skill, or a refusal's status and code). Never the token."""
    if not audit_log.isEnabledFor(logging.INFO):
        return
    line: dict[str, Any] = {"server": server}
    if principal is not None:
        line["sub"] = principal.subject
        line["client"] = principal.client_id
    line.update((k, v) for k, v in fields.items() if v is not None)
    audit_log.info(json.dumps(line, ensure_ascii=False, default=str))


def log_audit_to_stderr() -> None:
    """Send the audit lines to stderr, one JSON object per line (a server with auth)."""
    import sys

    if audit_log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    audit_log.addHandler(handler)
    audit_log.setLevel(logging.INFO)
    audit_log.propagate = False
