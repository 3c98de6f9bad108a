"""What conftest.py promises every test: no real home, no network beyond loopback."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest


def test_the_home_is_a_temp_folder(isolated_home: Path) -> None:
    assert os.environ["SKILLPACK_HOME"] == os.environ["HOME"] == str(isolated_home)
    assert Path.home() == isolated_home


@pytest.mark.parametrize("host", ["example.com", "x.example", "8.8.8.8", "2001:db8::1"])
def test_a_name_or_address_beyond_loopback_is_refused(host: str) -> None:
    with pytest.raises(socket.gaierror, match="tests never reach the network"):
        socket.getaddrinfo(host, 443)


def test_a_direct_connect_beyond_loopback_is_refused() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        pytest.raises(ConnectionRefusedError, match="tests never reach the network"),
    ):
        sock.connect(("192.0.2.1", 80))


def test_loopback_still_resolves_and_connects() -> None:
    assert socket.getaddrinfo("127.0.0.1", 80)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_temporary_folders_go_to_a_memory_file_system_unless_a_temp_folder_is_named(
    tmp_path: Path,
) -> None:
    import tempfile

    from conftest import memory_temp_root

    assert memory_temp_root({"TMPDIR": str(tmp_path)}) is None
    assert memory_temp_root({"TMP": str(tmp_path)}) is None
    chosen = memory_temp_root(os.environ)
    temp = Path(tempfile.gettempdir())
    assert chosen is None or temp == chosen
    assert tmp_path.resolve().is_relative_to(temp.resolve())
