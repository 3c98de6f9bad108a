"""An OCI distribution client: references, credentials, pull and push by digest.

Written over httpx (the `install` extra) rather than oras-py, which cannot set a
manifest's `artifactType`, cannot push an image index, saves non-standard layers
without our archive rules, reads only `~/.docker/config.json` (not `DOCKER_CONFIG`)
and does not map `docker.io` to its API host (docs/design.md, "OCI registries").

- **References**: `REGISTRY/REPO[:TAG][@DIGEST]` (an `oci://` prefix is optional);
  `docker.io` talks to `registry-1.docker.io`, and a one-segment Docker Hub
  repository gets `library/`.
- **Transport**: https always; plain http only for a loopback registry (tried when
  https cannot connect) or one named with `insecure` (which also skips certificate
  checks). Every request, redirects and upload `Location`s included, is checked:
  plain http only to a loopback host or the registry named `insecure`. Credentials
  and tokens go only to the registry's own origin (scheme, host, port): an upload
  `Location` or a redirect elsewhere (blob storage) gets no `Authorization`.
- **Auth**: the registry's `WWW-Authenticate` challenge decides: `Bearer` fetches a
  token from the realm (with the user's credentials when there are any), `Basic`
  sends them. Credentials come from `$DOCKER_CONFIG/config.json` or
  `~/.docker/config.json`: `credHelpers[host]`, then `credsStore`, then
  `auths[host]`. No secret is ever put in a message, a log or a lock entry.
- **Integrity**: every manifest and blob fetched by digest is checked against it
  (and against its descriptor's size); a manifest fetched by tag is digested, and a
  `Docker-Content-Digest` that disagrees is refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from .._errors import SkillIOError, UsageError
from .._httpguard import is_loopback
from ._transport import Fetched, Transport, TransportFailure, url_allowed
from ._values import Limits

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
INDEX_TYPES = frozenset({OCI_INDEX, DOCKER_LIST})
MANIFEST_TYPES = frozenset({OCI_MANIFEST, DOCKER_MANIFEST})
ACCEPT = ", ".join((OCI_MANIFEST, OCI_INDEX, DOCKER_MANIFEST, DOCKER_LIST))
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
"""The distribution spec's suggested manifest limit."""

DOCKER_HUB = "docker.io"
DOCKER_HUB_API = "registry-1.docker.io"
_HUB_ALIASES = ("docker.io", "index.docker.io", "registry-1.docker.io")
_HUB_CONFIG_KEY = "https://index.docker.io/v1/"

_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST = re.compile(r"(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})")
_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


class OciError(SkillIOError):
    """A registry could not give what was asked; names the reference and the reason
    (`reason`: the stable refusal code it becomes, e.g. `digest-mismatch`)."""

    def __init__(self, message: str, *, reason: str, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


@dataclass(frozen=True, kw_only=True, slots=True)
class OciRef:
    """A parsed `REGISTRY/REPO[:TAG][@DIGEST]`."""

    registry: str
    """As written (`docker.io`, `ghcr.io`, `127.0.0.1:5000`)."""
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def api_host(self) -> str:
        """The host the API is on (Docker Hub's differs from its name)."""
        return DOCKER_HUB_API if self.registry in _HUB_ALIASES else self.registry

    @property
    def reference(self) -> str:
        """The digest when pinned, else the tag (`latest` when neither was given)."""
        return self.digest or self.tag or "latest"

    @property
    def name(self) -> str:
        """`registry/repository`."""
        return f"{self.registry}/{self.repository}"

    def text(self) -> str:
        """`registry/repository[:tag][@digest]`."""
        tag = f":{self.tag}" if self.tag else ""
        digest = f"@{self.digest}" if self.digest else ""
        return f"{self.name}{tag}{digest}"

    def pinned(self, digest: str) -> OciRef:
        return OciRef(registry=self.registry, repository=self.repository, digest=digest)

    def child(self, name: str) -> OciRef:
        """`registry/repository/name` with the same tag."""
        return OciRef(registry=self.registry, repository=f"{self.repository}/{name}", tag=self.tag)


def parse_reference(text: str) -> OciRef:
    """Parse `[oci://]REGISTRY/REPO[:TAG][@DIGEST]`.

    Raises:
        UsageError: the text is not such a reference; the message shows the form.
    """
    given = text.strip()
    body = given.removeprefix("oci://")

    def bad(why: str) -> UsageError:
        return UsageError(
            f"{given!r} is not an OCI reference ({why}). Write "
            "oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST], e.g. "
            "oci://ghcr.io/org/skills/name:1.0."
        )

    digest: str | None = None
    if "@" in body:
        body, _, digest = body.partition("@")
        if not _DIGEST.fullmatch(digest):
            raise bad(f"the digest {digest!r} is not sha256:<64 hex> or sha512:<128 hex>")
    registry, slash, rest = body.partition("/")
    if not slash or not rest:
        raise bad("it names no repository after the registry")
    if not _HOST.fullmatch(registry) or not (
        "." in registry or ":" in registry or registry == "localhost"
    ):
        raise bad(f"{registry!r} is not a registry host (it needs a dot, a port or localhost)")
    tag: str | None = None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        rest, _, tag = rest.rpartition(":")
        if not _TAG.fullmatch(tag):
            raise bad(f"the tag {tag!r} is not 1-128 of A-Z a-z 0-9 _ . - (no leading . or -)")
    if registry.lower() in _HUB_ALIASES and "/" not in rest:
        rest = f"library/{rest}"
    if not _REPOSITORY.fullmatch(rest):
        raise bad(f"the repository {rest!r} must be lowercase path components")
    return OciRef(registry=registry.lower(), repository=rest, tag=tag, digest=digest)


def digest_of(data: bytes, algorithm: str = "sha256") -> str:
    return f"{algorithm}:{hashlib.new(algorithm, data).hexdigest()}"


def check_digest(data: bytes, expected: str, *, what: str) -> None:
    """Raise `digest-mismatch` unless `data` hashes to `expected`.

    Raises:
        OciError: the bytes were altered (or the registry answered for something else).
    """
    algorithm = expected.partition(":")[0]
    if algorithm not in ("sha256", "sha512"):
        raise OciError(
            f"{what} uses the digest algorithm {algorithm!r}; only sha256 and sha512 are "
            "verified, so it was not used.",
            reason="digest-unsupported",
        )
    actual = digest_of(data, algorithm)
    if actual != expected:
        raise OciError(
            f"{what}: the registry sent bytes whose digest is {actual}, not {expected}. "
            "The content was altered or the registry is broken; nothing was installed.",
            reason="digest-mismatch",
        )


# --- credentials ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class Credentials:
    username: str
    secret: str = ""

    def basic(self) -> str:
        raw = f"{self.username}:{self.secret}".encode()
        return "Basic " + base64.b64encode(raw).decode("ascii")

    def __repr__(self) -> str:  # never print the secret
        return f"Credentials(username={self.username!r}, secret=***)"


def docker_config_path() -> Path:
    """`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`."""
    folder = os.environ.get("DOCKER_CONFIG")
    if folder:
        return Path(folder) / "config.json"
    return Path.home() / ".docker" / "config.json"


def find_credentials(registry: str, *, config: Path | None = None) -> Credentials | None:
    """The credentials docker, podman, oras and skopeo would use for `registry`.

    Raises:
        UsageError: the config file is not JSON, or a credential helper failed (the
            message names the helper, never the secret).
    """
    path = config or docker_config_path()
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise UsageError(
            f"Cannot read the registry credentials file {path} ({type(error).__name__}); "
            "fix it or point DOCKER_CONFIG at another folder."
        ) from None
    if not isinstance(document, dict):
        return None
    keys = _config_keys(registry)
    helpers = document.get("credHelpers")
    if isinstance(helpers, dict):
        for key in keys:
            helper = helpers.get(key)
            if isinstance(helper, str) and helper:
                return _from_helper(helper, key)
    auths = document.get("auths")
    store = document.get("credsStore")
    if isinstance(store, str) and store:
        found = _from_helper(store, keys[0], missing_ok=True)
        if found is not None:
            return found
    if isinstance(auths, dict):
        for key in keys:
            entry = auths.get(key)
            if isinstance(entry, dict):
                found = _from_auth_entry(entry, path)
                if found is not None:
                    return found
    return None


def _config_keys(registry: str) -> list[str]:
    if registry in _HUB_ALIASES:
        return [_HUB_CONFIG_KEY, *_HUB_ALIASES, "https://registry-1.docker.io"]
    return [registry, f"https://{registry}", f"http://{registry}", f"https://{registry}/v1/"]


def _from_auth_entry(entry: Mapping[str, Any], path: Path) -> Credentials | None:
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            user, sep, secret = base64.b64decode(auth, validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            user, sep, secret = "", "", ""
        if not sep:
            raise UsageError(
                f"An `auth` value in {path} is not base64 of user:password; log in again."
            )
        return Credentials(username=user, secret=secret)
    name, password = entry.get("username"), entry.get("password")
    if isinstance(name, str) and name and isinstance(password, str):
        return Credentials(username=name, secret=password)
    return None


def _from_helper(helper: str, server: str, *, missing_ok: bool = False) -> Credentials | None:
    program = f"docker-credential-{helper}"
    try:
        result = subprocess.run(
            [program, "get"],
            input=server,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        if missing_ok:
            return None
        raise UsageError(
            f"The credential helper {program} for {server} could not run "
            f"({type(error).__name__}); install it or remove it from the docker config."
        ) from None
    if result.returncode != 0:
        if missing_ok or "credentials not found" in result.stdout + result.stderr:
            return None
        raise UsageError(
            f"The credential helper {program} failed for {server} (exit {result.returncode}); "
            "log in again with your registry tool."
        )
    try:
        data = json.loads(result.stdout)
        return Credentials(username=str(data["Username"]), secret=str(data["Secret"]))
    except (ValueError, KeyError, TypeError):
        raise UsageError(
            f"The credential helper {program} answered something other than "
            '{"Username", "Secret"} for ' + server + "."
        ) from None


# --- the client -----------------------------------------------------------------------


class OciClient:
    """One registry over one `Transport`, tokens cached per scope: what is OCI's own
    is the auth challenge, the https-then-http fallback of a loopback or `insecure`
    registry, and the digests."""

    def __init__(
        self,
        registry: str,
        *,
        limits: Limits,
        insecure: bool = False,
        credentials: Credentials | None = None,
        use_config: bool = True,
    ) -> None:
        self.registry = registry
        self.host = DOCKER_HUB_API if registry in _HUB_ALIASES else registry
        self.limits = limits
        self.insecure = insecure
        hostname = urlsplit(f"//{self.host}").hostname or ""
        self.loopback = is_loopback(hostname)
        self._scheme = "https"
        self._may_fall_back = insecure or self.loopback
        self._credentials = credentials
        self._use_config = use_config and credentials is None
        self._tokens: dict[str, str] = {}
        self._basic = False
        self._transport = Transport(
            limits=limits,
            insecure=frozenset({self.host.lower()}) if insecure else frozenset(),
            verify=not insecure,
        )

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> OciClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base(self) -> str:
        return f"{self._scheme}://{self.host}/v2/"

    # --- reading ---------------------------------------------------------------------

    def manifest(self, ref: OciRef, reference: str | None = None) -> Fetched:
        """The manifest or index `reference` (default: the ref's digest or tag) names.

        Raises:
            OciError: missing, refused, unreachable, too large or not matching its digest.
        """
        wanted = reference or ref.reference
        label = f"{ref.name}:{wanted}" if ":" not in wanted else f"{ref.name}@{wanted}"
        answer = self._request(
            "GET",
            f"{ref.repository}/manifests/{wanted}",
            repository=ref.repository,
            label=label,
            headers={"Accept": ACCEPT},
            max_bytes=MAX_MANIFEST_BYTES,
        )
        body, headers = answer.body, answer.headers
        media_type = answer.content_type.split(";")[0].strip()
        try:
            declared = json.loads(body).get("mediaType")
        except (ValueError, AttributeError):
            declared = None
        if isinstance(declared, str) and declared:
            media_type = declared
        if _DIGEST.fullmatch(wanted):
            check_digest(body, wanted, what=label)
            digest = wanted
        else:
            digest = digest_of(body)
            sent = headers.get("docker-content-digest")
            if sent and sent.startswith("sha256:") and sent != digest:
                raise OciError(
                    f"{label}: the registry says the tag points at {sent}, but the manifest "
                    f"it sent has the digest {digest}. The content was altered in transit or "
                    "the registry is broken; nothing was installed.",
                    reason="digest-mismatch",
                )
        return replace(answer, content_type=media_type, digest=digest)

    def blob(self, ref: OciRef, digest: str, *, size: int | None, max_bytes: int) -> bytes:
        """The blob `digest`, checked against its digest and its descriptor's size.

        A blob with a declared `size` is read at most that far: a longer answer is
        refused as soon as it passes the size, not at `max_bytes`.
        """
        label = f"{ref.name}@{digest}"
        if size is not None and size > max_bytes:
            raise OciError(
                f"{label} is {size} bytes, over the {max_bytes}-byte limit for one layer; it "
                "was not downloaded.",
                reason="too-large",
            )
        try:
            body = self._request(
                "GET",
                f"{ref.repository}/blobs/{digest}",
                repository=ref.repository,
                label=label,
                max_bytes=max_bytes if size is None else size,  # never past the declared size
            ).body
        except OciError as error:
            if size is None or error.reason != "too-large":
                raise
            raise OciError(
                f"{label}: the registry sent more than {size} bytes, but the manifest says "
                f"{size}; it was not read further and nothing was installed.",
                reason="digest-mismatch",
            ) from None
        if size is not None and len(body) != size:
            raise OciError(
                f"{label}: the registry sent {len(body)} bytes, but the manifest says {size}; "
                "nothing was installed.",
                reason="digest-mismatch",
            )
        check_digest(body, digest, what=label)
        return body

    def exists(self, ref: OciRef, reference: str) -> bool:
        """True when a manifest `reference` exists (a HEAD; 404 -> False)."""
        try:
            self._request(
                "HEAD",
                f"{ref.repository}/manifests/{reference}",
                repository=ref.repository,
                label=f"{ref.name}:{reference}",
                headers={"Accept": ACCEPT},
                max_bytes=0,
            )
        except OciError as error:
            if error.status == 404:
                return False
            raise
        return True

    def referrers(self, ref: OciRef, digest: str) -> dict[str, Any] | None:
        """The OCI 1.1 referrers index of `digest`, or None where the API is absent."""
        try:
            answer = self._request(
                "GET",
                f"{ref.repository}/referrers/{digest}",
                repository=ref.repository,
                label=f"{ref.name}@{digest} (referrers)",
                headers={"Accept": OCI_INDEX},
                max_bytes=MAX_MANIFEST_BYTES,
            )
        except OciError as error:
            if error.status in (404, 405, 400):
                return None
            raise
        if OCI_INDEX not in answer.content_type:
            return None
        try:
            data = json.loads(answer.body)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    # --- writing ---------------------------------------------------------------------

    def push_blob(self, ref: OciRef, data: bytes, digest: str | None = None) -> str:
        """Upload `data` unless the registry has it; its digest."""
        digest = digest or digest_of(data)
        repo = ref.repository
        try:
            self._request(
                "HEAD",
                f"{repo}/blobs/{digest}",
                repository=repo,
                label=f"{ref.name}@{digest}",
                max_bytes=0,
                push=True,
            )
            return digest
        except OciError as error:
            if error.status != 404:
                raise
        started = self._request(
            "POST",
            f"{repo}/blobs/uploads/",
            repository=repo,
            label=f"{ref.name} (upload)",
            max_bytes=MAX_MANIFEST_BYTES,
            push=True,
        )
        location = started.headers.get("location", "")
        if not location:
            raise OciError(
                f"{ref.name}: the registry started an upload but gave no Location.",
                reason="registry-error",
            )
        url = location if "://" in location else f"{self._scheme}://{self.host}{location}"
        separator = "&" if "?" in url else "?"
        self._request(
            "PUT",
            f"{url}{separator}{urlencode({'digest': digest})}",
            repository=repo,
            label=f"{ref.name}@{digest} (upload)",
            headers={"Content-Type": "application/octet-stream"},
            content=data,
            max_bytes=MAX_MANIFEST_BYTES,
            push=True,
        )
        return digest

    def push_manifest(self, ref: OciRef, body: bytes, media_type: str, reference: str) -> str:
        """PUT a manifest or index under `reference` (a tag or its digest); its digest."""
        digest = digest_of(body)
        self._request(
            "PUT",
            f"{ref.repository}/manifests/{reference}",
            repository=ref.repository,
            label=f"{ref.name}:{reference}",
            headers={"Content-Type": media_type},
            content=body,
            max_bytes=MAX_MANIFEST_BYTES,
            push=True,
        )
        return digest

    # --- one request, with auth, retries and the http fallback ------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        repository: str,
        label: str,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        push: bool = False,
    ) -> Fetched:
        scope = f"repository:{repository}:{'pull,push' if push else 'pull'}"
        authorized = False
        follow_up = "://" in path  # an upload Location: never rewritten to http
        while True:
            url = path if follow_up else self.base + path
            auth = self._authorization(scope)
            fall_back = self._may_fall_back and not follow_up and self._scheme == "https"
            try:
                answer = self._transport.send(
                    method,
                    url,
                    max_bytes=max_bytes,
                    headers=headers,
                    content=content,
                    authorization=(self.base, auth) if auth else None,
                    fail_fast_on_connect=fall_back,
                )
            except TransportFailure as failure:
                if fall_back and failure.kind == "unreachable" and failure.connect:
                    self._scheme = "http"
                    self._may_fall_back = False
                    continue
                raise self._failure(label, failure) from None
            self._may_fall_back = False
            if answer.status == 401 and not authorized:
                authorized = True
                self._authenticate(answer.headers.get("www-authenticate", ""), scope, label)
                continue
            if answer.status >= 400 or answer.status < 200:
                raise _status_error(answer.status, label, self.registry, answer.body)
            return answer

    def _authorization(self, scope: str) -> str | None:
        token = self._tokens.get(scope)
        if token is not None:
            return f"Bearer {token}"
        if self._basic:
            creds = self._creds()
            return creds.basic() if creds else None
        return None

    def _creds(self) -> Credentials | None:
        if self._credentials is None and self._use_config:
            self._use_config = False
            self._credentials = find_credentials(self.registry)
        return self._credentials

    def _authenticate(self, challenge: str, scope: str, label: str) -> None:
        kind, params = parse_challenge(challenge)
        creds = self._creds()
        if kind == "basic":
            if creds is None:
                raise _no_credentials(label, self.registry)
            self._basic = True
            return
        if kind != "bearer" or "realm" not in params:
            raise _no_credentials(label, self.registry)
        realm = params["realm"]
        realm_parts = urlsplit(realm)
        if not url_allowed(realm, self._transport.insecure):
            raise OciError(
                f"{label}: the registry sends its token requests to {realm_parts.scheme}://"
                f"{realm_parts.hostname}, which is not https; refusing to send credentials there.",
                reason="auth-failed",
            )
        query = {"scope": params.get("scope") or scope}
        if "service" in params:
            query["service"] = params["service"]
        # The realm the registry's challenge names gets the credentials to exchange.
        separator = "&" if "?" in realm else "?"
        try:
            answer = self._transport.send(
                "GET",
                f"{realm}{separator}{urlencode(query)}",
                max_bytes=MAX_MANIFEST_BYTES,
                authorization=(realm, creds.basic()) if creds else None,
            )
        except TransportFailure as failure:
            raise self._failure(f"{label} (token service)", failure) from None
        if answer.status != 200:
            raise OciError(
                f"{label}: the token service of {self.registry} answered HTTP "
                f"{answer.status}"
                + (
                    "; the credentials were refused. Log in again."
                    if creds
                    else "; no credentials were found for it. Log in with docker/podman/oras "
                    "login (DOCKER_CONFIG or ~/.docker/config.json)."
                ),
                reason="auth-failed",
                status=401,
            )
        try:
            data = json.loads(answer.body)
            token = data.get("token") or data.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise OciError(
                f"{label}: the token service of {self.registry} sent no token.",
                reason="auth-failed",
            )
        self._tokens[scope] = token

    def _failure(self, label: str, failure: TransportFailure) -> OciError:
        """The registry's words for a transport failure."""
        if failure.kind == "too-large":
            return OciError(
                f"{label} is larger than the {failure.limit}-byte limit; it was not downloaded.",
                reason="too-large",
            )
        if failure.kind == "refused-url":
            return OciError(f"{label}: {failure}", reason="registry-error")
        name = type(failure.cause).__name__
        reason = "did not answer in time" if failure.timed_out else f"cannot be reached ({name})"
        return OciError(
            f"{label}: the registry {self.registry} {reason} after {failure.tries} tries; "
            "nothing was installed. Check the address and your network.",
            reason="registry-unreachable",
        )


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """`Bearer realm="…",service="…"` -> ("bearer", {realm, service})."""
    kind, _, rest = header.strip().partition(" ")
    params = {
        key.lower(): value for key, value in re.findall(r'([A-Za-z_]+)\s*=\s*"([^"]*)"', rest)
    }
    return kind.lower(), params


def _no_credentials(label: str, registry: str) -> OciError:
    return OciError(
        f"{label}: {registry} requires credentials (HTTP 401) and none were found. Log in "
        "with docker/podman/oras login (DOCKER_CONFIG or ~/.docker/config.json).",
        reason="auth-failed",
        status=401,
    )


def _status_error(status: int, label: str, registry: str, body: bytes) -> OciError:
    detail = ""
    try:
        errors = json.loads(body).get("errors") or []
        codes = [str(e.get("code")) for e in errors if isinstance(e, dict)][:3]
        detail = f" ({', '.join(codes)})" if codes else ""
    except (ValueError, AttributeError):
        pass
    if status == 404:
        return OciError(
            f"{label} does not exist in {registry} (HTTP 404{detail}). Check the repository "
            "and the tag or digest.",
            reason="not-found",
            status=status,
        )
    if status in (401, 403):
        return OciError(
            f"{label}: {registry} refused access (HTTP {status}{detail}). Check that you are "
            "logged in with an account that may read (or push to) this repository.",
            reason="auth-failed",
            status=status,
        )
    if status == 429:
        return OciError(
            f"{label}: {registry} is rate-limiting requests (HTTP 429) and kept refusing "
            "after retries; wait and try again.",
            reason="rate-limited",
            status=status,
        )
    return OciError(
        f"{label}: {registry} answered HTTP {status}{detail}.",
        reason="registry-error",
        status=status,
    )
