"""The stdio front of `skillpack mcp` (`mcp/_front.py`): the SDK server's messages.

Every conversation here runs twice through `skillpack mcp` over pipes, with the front
(`SKILLPACK_MCP_FAST_START` unset) and without it (`=0`: the SDK serves from the
first line), and the two transcripts must be the same messages in the same order,
each one line of JSON: the SDK's answers are the reference. (A float may be
spelt otherwise, `1e+100` for `1e100`: the same number to any JSON reader.)

The front's side always starts a new interpreter: how it paces its start is what it
is for. The SDK's side is forked from one interpreter that has imported skillpack and
the SDK already (`forkserver.py`): the same command from its first line, its own
environment and pipes, without a second of imports each time.
"""

from __future__ import annotations

import json
import math
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import forkserver
import pytest
from forkserver import ForkServer
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the MCP server needs the mcp extra")

from conftest import isolated_env  # noqa: E402
from skillpack.mcp import _front  # noqa: E402
from skillpack.mcp._handshake import recorded  # noqa: E402

SERVE = [sys.executable, "-c", "from skillpack.cli import main; main()"]
DEADLINE_S = 90.0
"""How long a test waits for an answer before it fails (a hang, not a speed check)."""


def request(ident: float | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str = "2025-11-25", ident: int | str = 1, **extra: Any) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
        **extra,
    }
    return request(ident, "initialize", params)


INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}


@pytest.fixture
def tree(tmp_path: Path, write_skill: Any) -> Path:
    """Skills the listing serves, one it cannot list (a YAML 1.2 name) and an invalid one,
    so the log message about what is left out is part of the conversation."""
    root = tmp_path / "skills"
    for index in range(30):
        write_skill(f"s{index:02d}", base=root, files={"notes.md": f"note {index} é\n"})
    write_skill(
        "floats",
        base=root,
        frontmatter="name: floats\ndescription: Numbers é ✓ and </script>.\n"
        "metadata:\n  big: 1e100\n  inf: .inf\n  half: 0.5\n  huge: 123456789012345678901234",
    )
    write_skill("yes", base=root, frontmatter="name: yes\ndescription: A YAML 1.2 boolean name.")
    write_skill("broken", base=root, text="no frontmatter here\n")
    return root


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer | None]:
    """Where the SDK's side of a conversation starts (module docstring); None where
    the platform cannot fork one (each side then starts its own process)."""
    if not forkserver.available():
        yield None
        return
    folder = tmp_path_factory.mktemp("forks")
    server = ForkServer(folder, isolated_env(folder / "home"))
    yield server
    server.close()


def spawn(
    root: Path,
    *,
    fast: bool,
    args: tuple[str, ...] = (),
    forks: ForkServer | None = None,
    **env_vars: str,
) -> Any:
    """`skillpack mcp` over `root`: a new process, or forked from `forks`."""
    env = dict(os.environ, SKILLPACK_MCP_FAST_START="1" if fast else "0", **env_vars)
    argv = ["mcp", "--no-user", "--no-system", "--cwd", str(root), "--root", str(root), *args]
    if forks is not None:
        return forks.spawn(argv, env=env)
    return subprocess.Popen(
        [*SERVE, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


class Reader:
    """A server's stdout as lines, read with a deadline (no buffering hides a line)."""

    def __init__(self, process: Any) -> None:
        assert process.stdout is not None
        self._process = process
        self._fd = process.stdout.fileno()
        self._buffer = b""

    def line(self) -> bytes:
        line = self.line_within(DEADLINE_S)
        assert line is not None, "the server did not answer"
        return line

    def line_within(self, seconds: float) -> bytes | None:
        """The next line, or None when none came within `seconds`."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._fd], [], [], max(0.0, left))
            if not ready:
                return None
            data = os.read(self._fd, 65536)
            assert data, f"the server ended: {self._process.stderr.read().decode()}"
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def rest(self) -> list[bytes]:
        """What is left once the server has exited."""
        data = self._buffer + b"".join(iter(lambda: os.read(self._fd, 65536), b""))
        return data.splitlines(keepends=True)


def converse(
    root: Path,
    lines: list[Any],
    *,
    fast: bool,
    args: tuple[str, ...] = (),
    forks: ForkServer | None = None,
) -> list[bytes]:
    """Write every line at once (a pipelining client), read until each request with an
    id has its answer, then close stdin; the transcript of what came back, in order
    (`forks`: the server forked from there, else a new process)."""
    process = spawn(root, fast=fast, args=args, forks=forks)
    assert process.stdin is not None
    data = b"".join(
        line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines
    )
    process.stdin.write(data)
    process.stdin.flush()
    waiting = {  # every request a server answers (one with a float id gets no answer)
        line["id"]
        for line in lines
        if isinstance(line, dict) and isinstance(line.get("id"), int | str) and "method" in line
    }
    transcript = []
    reader = Reader(process)
    try:
        while waiting:
            line = reader.line()
            transcript.append(line)
            ident = json.loads(line).get("id")
            waiting.discard(ident)
    finally:
        process.stdin.close()
        process.wait(timeout=DEADLINE_S)
        assert process.stdout is not None and process.stderr is not None
        transcript.extend(reader.rest())
        process.stdout.close()
        process.stderr.close()
    return transcript


def message(line: bytes) -> str:
    """A transcript line as the message it carries (keys sorted), checked to be one line."""
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    return json.dumps(json.loads(line), sort_keys=True)


def same_messages(
    root: Path,
    lines: list[Any],
    forks: ForkServer | None,
    args: tuple[str, ...] = (),
    *,
    ordered: bool = True,
) -> list[bytes]:
    """The transcript, the same messages with the front (a new process) and without
    (forked from `forks`; `ordered=False`: for a conversation where the SDK server's
    own order is not fixed)."""
    fast = converse(root, lines, fast=True, args=args)
    slow = converse(root, lines, fast=False, args=args, forks=forks)
    fast_messages, slow_messages = [message(m) for m in fast], [message(m) for m in slow]
    if ordered:
        assert fast_messages == slow_messages
    else:
        assert sorted(fast_messages) == sorted(slow_messages)
    return fast


@pytest.mark.parametrize("version", [*recorded().versions, "1999-01-01"])
def test_a_pipelined_conversation_gets_the_sdk_servers_messages(
    tree: Path, forks: ForkServer | None, version: str
) -> None:
    first = request(2, "skills/list")
    lines = [initialize(version), INITIALIZED, first, request("p", "ping")]
    transcript = same_messages(tree, lines, forks)
    answers = [json.loads(line) for line in transcript]
    assert answers[0]["result"]["protocolVersion"] == (
        version if version in recorded().versions else recorded().fallback
    )
    assert [a.get("id", a.get("method")) for a in answers] == [
        1,
        "notifications/message",  # what is left out, on `initialized`
        "notifications/message",  # and again when the page finds one it cannot list
        2,
        "p",
    ]
    page = answers[3]["result"]
    assert len(page["skills"]) == 25 and "nextCursor" in page


def test_after_the_first_page_the_sdk_serves_the_rest_in_order(
    tree: Path, forks: ForkServer | None
) -> None:
    lines: list[Any] = [
        initialize(),
        INITIALIZED,
        request(2, "skills/list"),
        request(3, "tools/list"),  # the front hands over here
        request(4, "skills/list", {"cursor": "eyJvIjogMjV9"}),
        request(5, "ping"),
    ]
    transcript = same_messages(tree, lines, forks)
    ids = [json.loads(line).get("id") for line in transcript]
    assert [i for i in ids if i is not None] == [1, 2, 3, 4, 5]
    assert b'"id":"skillpack-front/initialize"' not in b"".join(transcript)


def test_the_catalog_in_the_instructions_waits_for_discovery(
    tree: Path, forks: ForkServer | None
) -> None:
    args = ("--catalog-instructions",)
    lines = [initialize(), INITIALIZED, request(2, "skills/list")]
    transcript = same_messages(tree, lines, forks, args)
    assert "s00" in json.loads(transcript[0])["result"]["instructions"]


@pytest.mark.parametrize(
    "lines",
    [
        pytest.param([request(1, "tools/list"), initialize(ident=2)], id="tools-first"),
        pytest.param([request(1, "skills/list"), initialize(ident=2)], id="list-first"),
        pytest.param([initialize(_meta={"progressToken": 1})], id="init-meta"),
        pytest.param(
            [initialize(capabilities={"roots": {"listChanged": "yes"}})], id="bad-capability"
        ),
        pytest.param(
            [{**initialize(), "params": {"protocolVersion": 2025, "capabilities": {}}}],
            id="bad-params",
        ),
        pytest.param([initialize(), initialize(ident=2)], id="twice"),
        pytest.param(
            [initialize(), request(2, "skills/list", {"cursor": "nonsense"})], id="bad-cursor"
        ),
        pytest.param(
            [initialize(), request(2, "skills/list", {"_meta": {"progressToken": 7}})],
            id="list-meta",
        ),
        pytest.param([initialize(), request(2.5, "ping"), request(3, "ping")], id="float-id"),
    ],
)
def test_what_the_front_does_not_answer_the_sdk_does(
    tree: Path, forks: ForkServer | None, lines: list[Any]
) -> None:
    same_messages(tree, lines, forks)


def test_a_line_that_is_not_json_gets_the_sdk_servers_error(
    tree: Path, forks: ForkServer | None
) -> None:
    """The SDK's reader refuses such a line as it reads it, ahead of requests still being
    answered: only the order of the two is not fixed."""
    lines = [initialize(), b"{not json\n", request(2, "ping")]
    transcript = same_messages(tree, lines, forks, ordered=False)
    assert any(b"-32700" in line for line in transcript)


def test_a_line_nested_too_deeply_to_parse_gets_a_parse_error_and_serving_goes_on(
    tree: Path,
) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000 + b"\n"
    transcript = converse(tree, [initialize(), deep, request(2, "ping")], fast=True)
    assert json.loads(transcript[1])["error"]["code"] == -32700
    assert json.loads(transcript[-1]) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_a_last_line_without_a_newline_is_answered_before_exit(
    tree: Path, forks: ForkServer | None
) -> None:
    """At the end of input the front answers what it read, where the SDK server ends
    the request it was answering with a "connection closed" error."""
    lines = [initialize(), INITIALIZED, json.dumps(request(2, "skills/list")).encode()]
    fast = converse(tree, lines, fast=True)
    slow = converse(tree, lines, fast=False, forks=forks)
    assert fast[:2] == slow[:2]  # `initialize`, and what is left out on `initialized`
    assert "skills" in json.loads(fast[-1])["result"]


def test_a_client_that_leaves_after_initialize_ends_the_server(tree: Path) -> None:
    process = spawn(tree, fast=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(initialize()).encode() + b"\n")
    process.stdin.flush()
    reader = Reader(process)
    assert json.loads(reader.line())["id"] == 1
    process.stdin.close()
    assert process.wait(timeout=DEADLINE_S) == 0
    assert reader.rest() == []
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()


def test_a_catalog_change_after_the_hand_over_reaches_the_client(
    tree: Path, write_skill: Any
) -> None:
    """The watcher starts after the first page; the SDK server tells of changes."""
    process = spawn(tree, fast=True)
    assert process.stdin is not None
    for line in (initialize(), INITIALIZED, request(2, "skills/list"), request(3, "tools/list")):
        process.stdin.write(json.dumps(line).encode() + b"\n")
    process.stdin.flush()
    reader = Reader(process)
    try:
        seen: list[dict[str, Any]] = []
        while not any(m.get("id") == 3 for m in seen):
            seen.append(json.loads(reader.line()))
        # The watcher misses what is written before it watches (it starts after the
        # hand-over, on its own thread): a new skill each second until one is told.
        methods: set[str | None] = set()
        deadline = time.monotonic() + DEADLINE_S
        added = 0
        while "notifications/resources/list_changed" not in methods:
            assert time.monotonic() < deadline, "no change was told"
            write_skill(f"added-{added}", base=tree)
            added += 1
            until = time.monotonic() + 1.0
            while (told := reader.line_within(until - time.monotonic())) is not None:
                methods.add(json.loads(told).get("method"))
                if "notifications/resources/list_changed" in methods:
                    break
    finally:
        process.stdin.close()
        process.wait(timeout=DEADLINE_S)
        for stream in (process.stdout, process.stderr):
            assert stream is not None
            stream.close()


def test_a_server_that_cannot_start_stops_with_the_commands_error(
    tree: Path, forks: ForkServer | None
) -> None:
    """A budget that is no number stops `skillpack mcp` with its message and status,
    with the front as without it (the front's client has had its first page)."""
    outcomes = []
    for fast in (True, False):
        sdk = None if fast else forks
        process = spawn(tree, fast=fast, forks=sdk, SKILLS_PROMPT_CHAR_BUDGET="lots")
        assert process.stdin is not None
        for line in (initialize(), INITIALIZED, request(2, "skills/list")):
            process.stdin.write(json.dumps(line).encode() + b"\n")
        process.stdin.flush()
        code = process.wait(timeout=DEADLINE_S)
        process.stdin.close()
        assert process.stderr is not None and process.stdout is not None
        outcomes.append((code, process.stderr.read()))
        process.stdout.close()
        process.stderr.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] != 0 and b"SKILLS_PROMPT_CHAR_BUDGET='lots'" in outcomes[0][1]


def test_an_sdk_of_another_major_version_stops_the_server_before_it_answers(
    tree: Path, tmp_path: Path
) -> None:
    """The front starts discovery before checking the SDK's version; a failed check
    still ends the server with the extra's message, and nothing is answered."""
    shadow = tmp_path / "old-sdk"
    dist = shadow / "mcp-1.30.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mcp\nVersion: 1.30.0\n")
    path = os.pathsep.join(filter(None, (str(shadow), os.environ.get("PYTHONPATH"))))
    outcomes = []
    for fast in (True, False):
        process = spawn(tree, fast=fast, PYTHONPATH=path)
        out, err = process.communicate(
            b"".join(json.dumps(line).encode() + b"\n" for line in (initialize(), INITIALIZED)),
            timeout=DEADLINE_S,
        )
        outcomes.append((process.returncode, out, err))
    assert outcomes[0] == outcomes[1]
    code, out, err = outcomes[0]
    assert code == 2 and out == b""
    assert b"mcp>=2.3,<3 (installed: 1.30.0)" in err and b"skillpack[mcp]" in err


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(st.characters(exclude_categories=["Cs"]))
    | st.floats(allow_nan=True, allow_infinity=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON_VALUES)
def test_a_reply_reads_as_the_sdks_and_is_one_line(value: Any) -> None:
    import pydantic_core

    reply = {"jsonrpc": "2.0", "id": 1, "result": {"value": value}}
    written = _front._dump(reply)
    assert message(written) == message(pydantic_core.to_json(reply, inf_nan_mode="null") + b"\n")


def test_a_reply_with_floats_is_written_without_pydantic() -> None:
    written = _front._dump({"jsonrpc": "2.0", "id": 1, "result": {"half": 0.5, "big": 1e100}})
    assert written == b'{"jsonrpc":"2.0","id":1,"result":{"half":0.5,"big":1e+100}}\n'
    not_json = _front._dump({"jsonrpc": "2.0", "id": 1, "result": {"inf": math.inf}})
    assert not_json == b'{"jsonrpc":"2.0","id":1,"result":{"inf":null}}\n'


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    """A `Core` built in this process freezes what it built out of the collector's
    sight (`gc.freeze`): given back to it after each test, so no other test sees a heap
    it cannot collect."""
    import gc

    yield
    gc.unfreeze()


@pytest.mark.parametrize("collecting", [True, False])
def test_the_catalog_is_built_with_the_collector_paused_and_left_as_it_was(
    tree: Path, collecting: bool
) -> None:
    import gc

    from skillpack.runtime._session import Session

    seen: list[bool] = []

    def open_session() -> Session:
        seen.append(gc.isenabled())
        return Session.open(
            cwd=str(tree), roots=[str(tree)], include_user=False, include_system=False
        )

    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    try:
        gc.unfreeze()
        core = _front.Core(open_session)
        assert core.pages().view().skills  # discovery and the first page's entries done
        assert seen == [False]
        assert gc.isenabled() is collecting
        # What discovery built is out of the collector's sight: the first collection
        # after it does not rescan the catalog on the first request's time.
        assert gc.get_freeze_count() > 0
        core.close()
    finally:
        (gc.enable if was else gc.disable)()


def test_the_front_is_on_unless_the_environment_turns_it_off() -> None:
    assert _front.enabled({})
    assert _front.enabled({_front.FAST_START_ENV: "1"})
    assert not _front.enabled({_front.FAST_START_ENV: "0"})


def _session_opener(tree: Path, gate: Any = None) -> Any:
    from skillpack.runtime._session import Session

    def open_session() -> Session:
        if gate is not None:
            assert gate.wait(DEADLINE_S)
        return Session.open(
            cwd=str(tree), roots=[str(tree)], include_user=False, include_system=False
        )

    return open_session


def test_initialize_is_answered_once_the_catalog_is_ready(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_front, "HANDSHAKE_WAIT_S", DEADLINE_S)
    core = _front.Core(_session_opener(tree))
    replies = core.answer(json.dumps(initialize()).encode() + b"\n")
    assert replies is not None and b'"protocolVersion"' in replies[0]
    assert core.ready  # the first request after the handshake does not wait
    core.close()


def test_initialize_waits_for_the_catalog_no_longer_than_its_bound(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    monkeypatch.setattr(_front, "HANDSHAKE_WAIT_S", 0.05)
    gate = threading.Event()
    core = _front.Core(_session_opener(tree, gate))
    replies = core.answer(json.dumps(initialize()).encode() + b"\n")
    assert replies is not None and b'"protocolVersion"' in replies[0]
    assert not core.ready  # answered while discovery is still held back
    gate.set()
    assert core.pages().view().skills
    core.close()


def test_a_cold_start_writes_the_index_once_its_first_answers_are_out(tree: Path) -> None:
    from conftest import stored_snapshots as snapshots

    core = _front.Core(_session_opener(tree))
    assert core.pages().view().skills
    assert snapshots() == 0, "held back while the first page is being asked for"
    core.free_index()  # what the SDK's loading does
    core.close()
    assert snapshots() == 1
    again = _front.Core(_session_opener(tree))
    assert again.pages().view().skills
    assert snapshots() == 1
    again.close()
