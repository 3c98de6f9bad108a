"""A real OCI registry for the tests: the CNCF distribution server (Debian `docker-registry`)
started on 127.0.0.1 on a free port with its own storage, plainly or with htpasswd auth
over TLS (a certificate made here); plus a raw client to push hand-made artifacts."""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import io
import json
import shutil
import socket
import subprocess
import tarfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

REGISTRY_BIN = shutil.which("docker-registry")
SKOPEO = shutil.which("skopeo")
needs_registry = pytest.mark.skipif(
    REGISTRY_BIN is None,
    reason="the CNCF distribution server `docker-registry` is not installed "
    "(apt-get install docker-registry; .ci/run installs it)",
)
needs_skopeo = pytest.mark.skipif(
    SKOPEO is None, reason="skopeo is not installed (apt-get install skopeo)"
)
USER, PASSWORD = "tester", "s3cret-passw0rd"


@dataclass(frozen=True)
class Registry:
    host: str
    """`127.0.0.1:PORT`."""
    ca: Path | None = None
    """The certificate to trust (TLS registries)."""
    auth: tuple[str, str] | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.ca else 'http'}://{self.host}"

    def client(self) -> httpx.Client:
        verify: Any = True
        if self.ca is not None:
            import ssl

            verify = ssl.create_default_context(cafile=str(self.ca))
        return httpx.Client(base_url=self.url, auth=self.auth, verify=verify, timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _certificate(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    import ipaddress

    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@contextlib.contextmanager
def run_registry(folder: Path, *, secure: bool = False) -> Iterator[Registry]:
    """`docker-registry serve` on 127.0.0.1:<free port>, storage under `folder`."""
    assert REGISTRY_BIN is not None
    folder.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    config: dict[str, Any] = {
        "version": 0.1,
        "log": {"level": "error", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(folder / "data")}},
        "http": {"addr": f"127.0.0.1:{port}", "secret": "test-secret"},
    }
    ca: Path | None = None
    auth: tuple[str, str] | None = None
    if secure:
        import bcrypt

        cert, key = _certificate(folder)
        ca = cert
        config["http"]["tls"] = {"certificate": str(cert), "key": str(key)}
        hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=5)).decode()
        (folder / "htpasswd").write_text(f"{USER}:{hashed}\n", encoding="utf-8")
        config["auth"] = {"htpasswd": {"realm": "test", "path": str(folder / "htpasswd")}}
        auth = (USER, PASSWORD)
    (folder / "config.yml").write_text(json.dumps(config), encoding="utf-8")
    log = (folder / "registry.log").open("wb")
    process = subprocess.Popen(
        [REGISTRY_BIN, "serve", str(folder / "config.yml")], stdout=log, stderr=log
    )
    registry = Registry(host=f"127.0.0.1:{port}", ca=ca, auth=auth)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with registry.client() as client:
                    client.get("/v2/")
                break
            except httpx.HTTPError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "docker-registry did not start: "
                        + (folder / "registry.log").read_text(errors="replace")[-2000:]
                    ) from None
                time.sleep(0.05)
        yield registry
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


# --- a generic raw push (what another tool would have written) ------------------------


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def push_blob(registry: Registry, repo: str, data: bytes) -> dict[str, Any]:
    with registry.client() as client:
        started = client.post(f"/v2/{repo}/blobs/uploads/")
        assert started.status_code == 202, started.text
        location = started.headers["Location"]
        separator = "&" if "?" in location else "?"
        done = client.put(
            f"{location}{separator}digest={digest(data)}",
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        assert done.status_code == 201, done.text
    return {"digest": digest(data), "size": len(data)}


def push_manifest(
    registry: Registry, repo: str, reference: str, document: Mapping[str, Any]
) -> str:
    body = json.dumps(document).encode()
    media_type = str(document["mediaType"])
    with registry.client() as client:
        answer = client.put(
            f"/v2/{repo}/manifests/{reference}",
            content=body,
            headers={"Content-Type": media_type},
        )
        assert answer.status_code == 201, answer.text
    return digest(body)


def targz(
    entries: Mapping[str, bytes | str], *, symlinks: Mapping[str, str] | None = None
) -> bytes:
    """A tar.gz of `entries` (path -> content); `symlinks` adds link entries."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as archive:
        for path, content in entries.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
        for path, target in (symlinks or {}).items():
            info = tarfile.TarInfo(path)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return raw.getvalue()


def push_artifact(
    registry: Registry,
    repo: str,
    tag: str,
    *,
    layers: list[tuple[str, bytes]],
    config: tuple[str, bytes] = ("application/vnd.oci.image.config.v1+json", b"{}"),
    artifact_type: str | None = None,
    annotations: Mapping[str, str] | None = None,
) -> str:
    """Push a manifest with the given layers; its digest."""
    config_type, config_body = config
    manifest: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": config_type, **push_blob(registry, repo, config_body)},
        "layers": [
            {"mediaType": media_type, **push_blob(registry, repo, body)}
            for media_type, body in layers
        ],
    }
    if artifact_type:
        manifest["artifactType"] = artifact_type
    if annotations:
        manifest["annotations"] = dict(annotations)
    return push_manifest(registry, repo, tag, manifest)


def docker_config(folder: Path, registry: Registry) -> Path:
    """A DOCKER_CONFIG folder whose config.json logs in to `registry`."""
    assert registry.auth is not None
    folder.mkdir(parents=True, exist_ok=True)
    token = base64.b64encode(f"{registry.auth[0]}:{registry.auth[1]}".encode()).decode()
    (folder / "config.json").write_text(
        json.dumps({"auths": {registry.host: {"auth": token}}}), encoding="utf-8"
    )
    return folder


_STATUS_SERVER = """
import http.server, socket, sys, time
status = int(sys.argv[1])
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        if status == 0:
            time.sleep(60)
            return
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.send_header("Retry-After", "0")
        self.end_headers()
    do_HEAD = do_GET
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@contextlib.contextmanager
def _script_server(script: str, *args: str) -> Iterator[str]:
    """Run a server `script` (prints its port first) on 127.0.0.1; yields `host:port`."""
    import sys

    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def misbehaving_registry(status: int) -> contextlib.AbstractContextManager[str]:
    """A server on 127.0.0.1 answering every request with `status` (0: never answers);
    yields its `host:port`."""
    return _script_server(_STATUS_SERVER, str(status))


def blob_path(root: Path, blob_digest: str) -> Path:
    """Where distribution keeps a blob's bytes under its storage root."""
    hex_part = blob_digest.split(":", 1)[1]
    return root / "data/docker/registry/v2/blobs/sha256" / hex_part[:2] / hex_part / "data"


_BEARER_PROXY = """
import base64, http.server, sys, urllib.error, urllib.request
upstream, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    def do_GET(self):
        port = self.server.server_address[1]
        if self.path.startswith("/token"):
            if self.headers.get("Authorization") != expected:
                return self.reply(401)
            return self.reply(200, b'{"token": "tok-123"}', [("Content-Type", "application/json")])
        if self.headers.get("Authorization") != "Bearer tok-123":
            challenge = f'Bearer realm="http://127.0.0.1:{port}/token",service="test"'
            return self.reply(401, b"{}", [("WWW-Authenticate", challenge)])
        request = urllib.request.Request(f"http://{upstream}{self.path}", method=self.command)
        for key in ("Accept",):
            if self.headers.get(key):
                request.add_header(key, self.headers[key])
        try:
            with urllib.request.urlopen(request) as answer:
                status, body, headers = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as error:
            status, body, headers = error.code, error.read(), error.headers
        names = ("Content-Type", "Docker-Content-Digest")
        keep = [(k, v) for k, v in headers.items() if k in names]
        self.reply(status, body, keep)
    do_HEAD = do_GET
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def bearer_proxy(
    upstream: Registry, user: str, password: str
) -> contextlib.AbstractContextManager[str]:
    """A registry front on 127.0.0.1 that demands a Bearer token from its own token
    service (Basic `user:password`) and passes reads to `upstream`; yields `host:port`."""
    return _script_server(_BEARER_PROXY, upstream.host, user, password)


def key_pair(folder: Path, name: str) -> tuple[Path, Path, Any]:
    """A cosign-style ECDSA P-256 key pair written as `<name>.key` and `<name>.pub`."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public, key
