"""A static file server for the install tests, run as a subprocess on 127.0.0.1.

    python site_server.py ROOT LOG

Prints its port on the first line of stdout, then serves ROOT like any static host,
with strong ETags (`If-None-Match` gets a 304). Every request is appended to LOG as
`<status> <path>`. Paths under two prefixes misbehave on purpose:

- `/hang/...`: the connection is accepted and never answered;
- `/slow/...`: the file under the rest of the path, sent 512 bytes every 0.2 s;
- `/status/<code>/...`: that HTTP status, every time;
- `/redirect-to/<url>`: a 302 to `<url>`.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import sys
import time
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve()
LOG = Path(sys.argv[2])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def _log(self, status: int) -> None:
        with LOG.open("a", encoding="utf-8") as handle:
            handle.write(f"{status} {self.path}\n")

    def do_GET(self) -> None:  # noqa: N802 (the http.server API)
        path = self.path.split("?", 1)[0]
        slow = False
        if path.startswith("/hang/"):
            self._log(0)
            time.sleep(600)
            return
        if path.startswith(("/status/", "/redirect-to/")):
            self._answer_special(path)
            return
        if path.startswith("/slow/"):
            slow, path = True, path[len("/slow") :]
        target = (ROOT / path.lstrip("/")).resolve()
        if not target.is_relative_to(ROOT) or not target.is_file():
            self._log(404)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = target.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        if self.headers.get("If-None-Match") == etag:
            self._log(304)
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self._log(200)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", _content_type(target.name))
        self.send_header("ETag", etag)
        self.end_headers()
        if not slow:
            self.wfile.write(body)
            return
        for start in range(0, len(body), 512):
            self.wfile.write(body[start : start + 512])
            self.wfile.flush()
            time.sleep(0.2)

    def _answer_special(self, path: str) -> None:
        if path.startswith("/status/"):
            status = int(path.split("/")[2])
            self._log(status)
            self.send_response(status)
        else:
            self._log(302)
            self.send_response(302)
            self.send_header("Location", self.path[len("/redirect-to/") :])
        self.send_header("Content-Length", "0")
        self.end_headers()


def _content_type(name: str) -> str:
    if name.endswith(".json"):
        return "application/json"
    if name.endswith(".md"):
        return "text/markdown"
    if name.endswith((".tar.gz", ".tgz")):
        return "application/gzip"
    if name.endswith(".zip"):
        return "application/zip"
    return "application/octet-stream"


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    os.environ.pop("PYTHONWARNINGS", None)
    server.serve_forever()


if __name__ == "__main__":
    main()
