"""Start `skillpack` commands as forks of one warm interpreter instead of new ones.

A test that starts `skillpack mcp` many times pays the interpreter's start and the
imports of skillpack and the MCP SDK each time (about a second of CPU). `ForkServer`
starts this file once: it imports what the command imports, then listens on a Unix
socket. Each `ForkServer.spawn` sends it a command line, an environment, a working
folder and three pipes; it forks, and the child, with the pipes as its stdin, stdout
and stderr, runs `skillpack.cli.main()` as `python -c "...main()" ARGS` would, which
ends the process itself. The test gets a `Forked`: the parts of `subprocess.Popen` the
tests use, its exit status told by the server.

Only the start is shared: each child runs the command from its first line with its own
environment, folder and pipes. What a child cannot stand for is anything decided
before `main()` runs (the interpreter's start, which SDK is importable): tests of those
start real processes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import IO, Any

PRELOAD = (
    "skillpack.cli._app",
    "skillpack.cli._mcp_cmds",
    "skillpack.mcp._server",
    "skillpack.mcp._stdio",
    "skillpack.runtime._session",
    "mcp.server.stdio",
)
"""What `skillpack mcp` imports on its way to serving: imported once, before forking."""


class Forked:
    """A command a `ForkServer` started: its pipes, pid and exit status."""

    def __init__(self, connection: socket.socket, stdin: int, stdout: int, stderr: int) -> None:
        self._connection = connection
        self.stdin: IO[bytes] | None = os.fdopen(stdin, "wb")
        self.stdout: IO[bytes] | None = os.fdopen(stdout, "rb")
        self.stderr: IO[bytes] | None = os.fdopen(stderr, "rb")
        self.returncode: int | None = None
        self.pid = int(self._receive(60)["pid"])

    def _receive(self, timeout: float | None) -> dict[str, Any]:
        self._connection.settimeout(timeout)
        try:
            data = self._connection.recv(4096)
        except TimeoutError:
            pid = getattr(self, "pid", "?")
            raise subprocess.TimeoutExpired(f"forked pid {pid}", timeout or 0) from None
        assert data, "the fork server closed the connection without an answer"
        message: dict[str, Any] = json.loads(data)
        return message

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = int(self._receive(timeout)["status"])
            self._connection.close()
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._connection], [], [], 0)[0]:
            return self.wait()
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, 9)

    def communicate(self, data: bytes = b"", timeout: float | None = None) -> tuple[bytes, bytes]:
        """Write `data`, close stdin, read both outputs to their end, wait."""
        assert self.stdin is not None and self.stdout is not None and self.stderr is not None
        with contextlib.suppress(BrokenPipeError):
            self.stdin.write(data)
        with contextlib.suppress(BrokenPipeError):
            self.stdin.close()
        chunks: dict[int, list[bytes]] = {self.stdout.fileno(): [], self.stderr.fileno(): []}
        deadline = None if timeout is None else time.monotonic() + timeout
        open_fds = list(chunks)
        while open_fds:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select(open_fds, [], [], left)
            if not ready:
                raise subprocess.TimeoutExpired(f"forked pid {self.pid}", timeout or 0)
            for fd in ready:
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    open_fds.remove(fd)
        out = b"".join(chunks[self.stdout.fileno()])
        err = b"".join(chunks[self.stderr.fileno()])
        self.stdout.close()
        self.stderr.close()
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(left)
        return out, err


class ForkServer:
    """This file run as a server in its own interpreter (`env`: its environment while
    it imports; each command gets its own)."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        # In a folder of /tmp's: a socket's path has at most 107 bytes, wherever the
        # tests' own temporary folders are.
        self._folder = tempfile.mkdtemp(prefix="forks-", dir="/tmp")
        self.path = os.path.join(self._folder, "sock")
        self._log = (folder / "forkserver.err").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, __file__, self.path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line == b"ready\n", (folder / "forkserver.err").read_text(errors="replace")

    def spawn(self, argv: list[str], *, env: dict[str, str], cwd: str | None = None) -> Forked:
        """Run `skillpack ARGV` (`argv` without the program) in a fork."""
        pipes = [os.pipe() for _ in range(3)]
        child_ends = [pipes[0][0], pipes[1][1], pipes[2][1]]
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            connection.connect(self.path)
            request = {"argv": argv, "env": env, "cwd": cwd or os.getcwd()}
            socket.send_fds(connection, [json.dumps(request).encode()], child_ends)
        finally:
            for fd in child_ends:
                os.close(fd)
        return Forked(connection, pipes[0][1], pipes[1][0], pipes[2][0])

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        self._log.close()
        shutil.rmtree(self._folder, ignore_errors=True)


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """In the fork: become `python -c "from skillpack.cli import main; main()" ARGV`."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.argv = ["-c", *request["argv"]]
    try:
        from skillpack.cli import main

        main()  # ends the process (os._exit)
    except BaseException:  # noqa: BLE001 - told on stderr, as an interpreter would
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(1)


def available() -> bool:
    """Whether this platform can run a fork server (fork, and descriptors passed over
    a Unix socket of packets: Linux)."""
    return sys.platform == "linux" and hasattr(os, "fork") and hasattr(socket, "send_fds")


def serve(path: str) -> None:
    sys.path[0] = ""  # as `python -c` has it
    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(8)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        connection, _ = listener.accept()
        data, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
        pid = os.fork()
        if pid == 0:
            listener.close()
            connection.close()
            _child(json.loads(data), fds)
        for fd in fds:
            os.close(fd)
        with contextlib.suppress(OSError):
            connection.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(OSError):
            connection.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
        connection.close()


if __name__ == "__main__":
    serve(sys.argv[1])
