"""A hostile OCI registry for the tests (not a test file): real servers on loopback.

`HostileRegistry` listens on 127.0.0.1, demands credentials (Basic, or Bearer from its
own token service) and keeps what is pushed to it, but sends every blob elsewhere:
an upload POST is answered `202 Location: http://127.0.0.2:PORT/upload/…` and a blob
GET `307` to the same second listener, which stores and serves the bytes and records
every request's headers. Whatever credential reaches 127.0.0.2 was sent off the
registry's origin.

`lying_blob_server` serves one manifest whose layer claims a small size and answers
the layer with many more bytes (streamed, no Content-Length), counting what it
managed to send before the client hung up.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

USER, PASSWORD = "robot", "hostile-s3cret"
TOKEN = "tok-hostile-0123456789"


@dataclass
class Record:
    """What the off-origin listener saw."""

    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def authorizations(self) -> list[str]:
        with self.lock:
            return [h["authorization"] for _m, _p, h in self.requests if "authorization" in h]


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


def server_port(handler: BaseHTTPRequestHandler) -> int:
    address: Any = handler.server.server_address
    return int(address[1])


@contextlib.contextmanager
def _serving(host: str, handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer((host, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@dataclass(frozen=True)
class HostileRegistry:
    host: str
    """`127.0.0.1:PORT`: the registry the user named."""
    elsewhere: str
    """`127.0.0.2:PORT`: where it sends the blobs."""
    record: Record

    def docker_config(self) -> dict[str, Any]:
        token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        return {"auths": {self.host: {"auth": token}}}


@contextlib.contextmanager
def hostile_registry(
    auth: str = "basic", location_host: str | None = None
) -> Iterator[HostileRegistry]:
    """Run the pair of servers; `auth` is `basic` or `bearer`; `location_host` (a
    `host:port`) replaces the second listener's address in the upload Location."""
    record = Record()
    manifests: dict[str, tuple[str, bytes]] = {}
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Elsewhere(_Quiet):
        def do_any(self) -> None:
            data = self.body()
            headers = {k.lower(): v for k, v in self.headers.items()}
            with record.lock:
                record.requests.append((self.command, self.path, headers))
            parts = urlsplit(self.path)
            if self.command == "PUT":
                (digest,) = parse_qs(parts.query)["digest"]
                record.blobs[digest] = data
                return self.reply(201)
            blob = record.blobs.get(parts.path.rsplit("/", 1)[-1])
            return self.reply(404) if blob is None else self.reply(200, blob)

        do_GET = do_PUT = do_PATCH = do_HEAD = do_any

    with _serving("127.0.0.2", Elsewhere) as other:
        elsewhere = f"127.0.0.2:{other.server_address[1]}"
        target = location_host or elsewhere

        class Registry(_Quiet):
            def authorized(self) -> bool:
                given = self.headers.get("Authorization")
                port = server_port(self)
                if auth == "basic":
                    if given == basic:
                        return True
                    challenge = 'Basic realm="hostile"'
                else:
                    if given == f"Bearer {TOKEN}":
                        return True
                    challenge = f'Bearer realm="http://127.0.0.1:{port}/token",service="hostile"'
                self.reply(401, b"{}", {"WWW-Authenticate": challenge})
                return False

            def do_any(self) -> None:
                data = self.body()
                path = urlsplit(self.path).path
                if path == "/token":
                    if self.headers.get("Authorization") != basic:
                        return self.reply(401)
                    answer = json.dumps({"token": TOKEN}).encode()
                    return self.reply(200, answer, {"Content-Type": "application/json"})
                if not self.authorized():
                    return None
                if path == "/v2/":
                    return self.reply(200, b"{}")
                if "/blobs/uploads/" in path and self.command == "POST":
                    return self.reply(202, headers={"Location": f"http://{target}/upload/abc"})
                if "/blobs/" in path:
                    digest = path.rsplit("/", 1)[-1]
                    if digest not in record.blobs:
                        return self.reply(404)
                    if self.command == "HEAD":
                        return self.reply(404)  # always asks for a new upload
                    return self.reply(307, headers={"Location": f"http://{target}/blob/{digest}"})
                if "/manifests/" in path:
                    reference = path.rsplit("/", 1)[-1]
                    if self.command == "PUT":
                        kind = self.headers.get("Content-Type", "")
                        digest = "sha256:" + hashlib.sha256(data).hexdigest()
                        manifests[reference] = manifests[digest] = (kind, data)
                        return self.reply(201, headers={"Docker-Content-Digest": digest})
                    found = manifests.get(reference)
                    if found is None:
                        return self.reply(404)
                    return self.reply(200, found[1], {"Content-Type": found[0]})
                return self.reply(404)

            do_GET = do_PUT = do_POST = do_HEAD = do_PATCH = do_any

        with _serving("127.0.0.1", Registry) as server:
            yield HostileRegistry(
                host=f"127.0.0.1:{server.server_address[1]}",
                elsewhere=elsewhere,
                record=record,
            )


@dataclass
class Sent:
    """How many bytes the lying server wrote before the client stopped reading."""

    bytes: int = 0
    whole: bool = False


@contextlib.contextmanager
def lying_blob_server(manifest: bytes, declared: int, served: int) -> Iterator[tuple[str, Sent]]:
    """A registry on 127.0.0.1 whose every manifest GET answers `manifest` and whose
    every blob GET streams `served` bytes (a layer the manifest says has `declared`);
    yields `host:port` and the running count."""
    sent = Sent()

    class Liar(_Quiet):
        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            if "/manifests/" in path:
                kind = json.loads(manifest)["mediaType"]
                return self.reply(200, manifest, {"Content-Type": kind})
            if "/blobs/" not in path:
                return self.reply(200, b"{}")
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                while sent.bytes < served:
                    piece = chunk[: served - sent.bytes]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    sent.bytes += len(piece)
                self.wfile.write(b"0\r\n\r\n")
                sent.whole = True
            except OSError:
                self.close_connection = True
            return None

        do_HEAD = do_GET

    with _serving("127.0.0.1", Liar) as server:
        yield f"127.0.0.1:{server.server_address[1]}", sent
