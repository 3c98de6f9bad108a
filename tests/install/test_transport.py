"""The one install transport: one loopback rule everywhere, the https rule, credentials
scoped to their origin, one backoff."""

from __future__ import annotations

import base64

import pytest
from hostile_registry import PASSWORD, USER, hostile_registry

from skillpack._errors import UsageError
from skillpack._httpguard import is_loopback
from skillpack.install import _resolve
from skillpack.install._http import check_url
from skillpack.install._oci import OciClient
from skillpack.install._transport import (
    Transport,
    TransportFailure,
    backoff,
    origin,
    retry_after,
    url_allowed,
)
from skillpack.install._values import Limits

LOOPBACK_TABLE = [
    ("localhost", True),
    ("LOCALHOST", True),
    ("127.0.0.1", True),
    ("127.1", True),
    ("0177.0.0.1", True),
    ("2130706433", True),
    ("127.255.255.254", True),
    ("[::1]", True),
    ("foo.localhost", False),
    ("localhost.example.com", False),
    ("127.0.0.1.example.com", False),
    ("10.0.0.1", False),
    ("0x7f.1", True),
    ("example.com", False),
    ("[::2]", False),
]


@pytest.mark.parametrize(("host", "loopback"), LOOPBACK_TABLE)
def test_every_install_module_judges_a_host_loopback_by_the_one_rule(
    host: str, loopback: bool
) -> None:
    assert is_loopback(host) is loopback
    url = f"http://{host}:8080/x"
    assert url_allowed(url) is loopback
    assert vars(_resolve)["is_loopback"] is is_loopback  # the worker-thread choice: same rule
    if loopback:
        check_url(url)
    else:
        with pytest.raises(UsageError, match="only https"):
            check_url(url)
    if not host.startswith("["):
        client = OciClient(f"{host.lower()}:5000", limits=Limits())
        try:
            assert client.loopback is loopback
        finally:
            client.close()


def test_plain_http_is_allowed_to_a_host_named_insecure_and_no_other() -> None:
    named = frozenset({"registry.example.com:5000"})
    assert url_allowed("http://registry.example.com:5000/v2/", named)
    assert not url_allowed("http://registry.example.com/v2/", named)
    assert not url_allowed("http://other.example.com:5000/v2/", named)
    assert url_allowed("https://other.example.com/v2/", named)
    assert not url_allowed("ftp://127.0.0.1/x") and not url_allowed("https:///x")


def test_an_origin_is_its_scheme_host_and_port_with_the_default_port_filled_in() -> None:
    assert origin("https://Registry.example.com/v2/") == origin("https://registry.example.com:443/")
    assert origin("http://127.0.0.1/") != origin("https://127.0.0.1/")
    assert origin("http://127.0.0.1:5000/") != origin("http://127.0.0.2:5000/")


def test_one_backoff_starts_at_a_quarter_second_doubles_and_honours_a_small_retry_after() -> None:
    assert [backoff(n) for n in range(6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
    assert backoff(0, retry_after({"retry-after": "3"})) == 3.0
    assert retry_after({"retry-after": "600"}) == 0.0  # not waited on: retried at once


def test_credentials_reach_only_their_origin_and_a_refused_url_is_never_sent() -> None:
    basic = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    with hostile_registry("basic") as registry:
        transport = Transport(limits=Limits(retries=0))
        try:
            base = f"http://{registry.host}/v2/"
            own = transport.send("GET", base, max_bytes=1024, authorization=(base, basic))
            assert own.status == 200  # the registry got the credential
            elsewhere = f"http://{registry.elsewhere}/blob/x"
            away = transport.send("GET", elsewhere, max_bytes=1024, authorization=(base, basic))
            assert away.status == 404
            with pytest.raises(TransportFailure) as caught:
                transport.send("GET", "http://192.0.2.1:9/x", max_bytes=1)
            assert caught.value.kind == "refused-url"
            with pytest.raises(TransportFailure) as large:
                transport.send("GET", base, max_bytes=1, authorization=(base, basic))
            assert large.value.kind == "too-large" and large.value.limit == 1
        finally:
            transport.close()
    assert [r[1] for r in registry.record.requests] == ["/blob/x"]
    assert registry.record.authorizations() == []


def test_a_retryable_status_is_tried_again_and_the_last_answer_returned() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[str] = []

    class Flaky(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.path)
            status = 503 if len(seen) < 3 else 200
            self.send_response(status)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/x"
    try:
        with_retries = Transport(limits=Limits(retries=2))
        answer = with_retries.send("GET", url, max_bytes=10)
        assert (answer.status, answer.body, len(seen)) == (200, b"ok", 3)
        seen.clear()
        without = Transport(limits=Limits(retries=0))
        assert without.send("GET", url, max_bytes=10).status == 503
        with_retries.close()
        without.close()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(TransportFailure) as caught:
        Transport(limits=Limits(retries=1)).send("GET", url, max_bytes=10)
    assert caught.value.kind == "unreachable" and caught.value.tries == 2
    assert caught.value.connect and not caught.value.timed_out
