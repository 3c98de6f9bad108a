"""Loading a big catalog's new SKILL.md files on two cores: this process and one helper.

A cold scan spends most of its time reading and parsing files one after another
while a second core idles. `LoadHelper` is one helper process per discovery run,
started once the run has met `HELPER_START_FILES` files the index has never seen
and only on a machine with a spare core. It runs this very copy of skillpack
(`python -S -c`, with this process's `sys.path`) and serves `serve_loads`: the
same `load_skill_md`, on the same file, sending each result back as the index
stores it (marshal of `skill_values` and `problem_values`). So a file gives the
same Skill and problems whichever process read it.

`load_many` shares one root's files: this process loads from the front of the list,
and hands the helper chunks of `CHUNK` files from the back, at most `IN_FLIGHT` at a
time and only once the helper has said it is ready, until the two meet. Nothing
waits on the helper's start-up: until it is ready, this process loads alone.

The helper only speeds things up; it never decides anything. If it cannot start,
dies, falls silent for `REPLY_WAIT_S`, or sends back something that does not
decode, it is stopped and this process loads the files it held. A result marshal
cannot hold (a value of a type it has no code for) comes back as "load it yourself".
Setting `SKILLPACK_LOAD_HELPER=0` in the environment turns the helper off.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .._model import Problem, Root, Skill
from ..index._snapshot import problem_values, problems_from_values, skill_from_values, skill_values
from ._found import Found, root_from_values, root_values, snapshot_item
from ._load import load_skill_md, unseen

if TYPE_CHECKING:
    import subprocess

    from ..index._cache import SkillCache

LOAD_HELPER_ENV: Final = "SKILLPACK_LOAD_HELPER"
"""`0` turns the helper off (any other value, or none, leaves it to the machine)."""
HELPER_START_FILES: Final = 1000
"""New files a run must meet before a helper is worth its start-up (about 80 ms of the
other core; this process pays only the spawn)."""
CHUNK: Final = 48
"""Files per request, the unit the two sides split by: small, so that at the end of a
root neither waits long on the other (48 files are about 4 ms of loading)."""
POLL_EVERY: Final = 8
"""Files this process loads between two looks at the helper's replies (a `poll` call)."""
IN_FLIGHT: Final = 2
"""Requests the helper holds at once: one it works on, one waiting."""
REPLY_WAIT_S: Final = 30.0
"""How long this process waits on a silent helper, with nothing else to do, before
stopping it and loading its files itself."""
_READY: Final = b"ready"
_HEADER: Final = 4

Loaded = tuple[Found | None, Skill | None, tuple[Problem, ...]]
"""`load_skill_md`'s result."""


class HelperLost(Exception):
    """The helper stopped answering as the protocol says; its files load here."""


def _spare_core() -> bool:
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) > 1


def _frame(data: bytes) -> bytes:
    """`data` with its length in front, as the other side reads it (`_read_frame`)."""
    return len(data).to_bytes(_HEADER, "little") + data


def _write_frame(fd: int, data: bytes) -> None:
    view = memoryview(_frame(data))
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, size: int) -> bytes | None:
    """`size` bytes from `fd`, None at the end of the stream before any."""
    data = os.read(fd, size)
    if not data or len(data) == size:
        return data or None
    parts = [data]
    got = len(data)
    while got < size:
        chunk = os.read(fd, size - got)
        if not chunk:
            raise EOFError("the stream ended inside a frame")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _read_frame(fd: int) -> bytes | None:
    """One frame's bytes; None when the stream ended between frames."""
    header = _read_exact(fd, _HEADER)
    if header is None:
        return None
    return _read_exact(fd, int.from_bytes(header, "little")) or b""


# ------------------------------------------------------------------- the helper's side


def serve_loads(read_fd: int, write_fd: int) -> None:
    """The helper's loop: answer each request with the loads it asks for, until the
    stream ends. A request is marshal of `(first, roots, strict, max_file_bytes,
    rows)`, each row a `snapshot_item` plus the index of its root in `roots`
    (`Root` fields in order); the reply is marshal of `(first, results)`, one result
    per row: `(stat or None, skill values or None, problem values)`, or None when
    marshal cannot hold it (the asker then loads that file itself)."""
    from . import _load

    _load._parser()  # imported before saying ready, so the first request is not slow
    _write_frame(write_fd, _READY)
    while (frame := _read_frame(read_fd)) is not None:
        first, roots, strict, max_file_bytes, rows = marshal.loads(frame)
        built = [root_from_values(values) for values in roots]
        results = [
            _result(
                load_skill_md(
                    Found._make((*row[:3], built[row[-1]], *row[3:-1])),
                    cache=None,
                    strict=strict,
                    max_file_bytes=max_file_bytes,
                )
            )
            for row in rows
        ]
        try:
            reply = marshal.dumps((first, tuple(results)))
        except ValueError:
            reply = marshal.dumps((first, tuple(_held(result) for result in results)))
        _write_frame(write_fd, reply)


def _result(loaded: Loaded) -> tuple[Any, ...]:
    item, skill, problems = loaded
    return (
        None if item is None else item[5:9],
        None if skill is None else skill_values(skill),
        problem_values(problems),
    )


def _held(result: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """`result` when marshal holds it, else None (the asker loads the file)."""
    try:
        marshal.dumps(result)
    except ValueError:
        return None
    return result


def _main() -> None:
    with contextlib.suppress(BrokenPipeError, EOFError, KeyboardInterrupt):
        serve_loads(sys.stdin.fileno(), sys.stdout.fileno())


# ------------------------------------------------------------------- this process's side


class LoadHelper:
    """One discovery run's helper process, started when the run has met enough new
    files (`HELPER_START_FILES`); `close` stops it. Not shared between threads."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._met = 0
        self._ready = False
        self._unsent = bytearray()
        self._off = False

    def started(self, new_files: int) -> bool:
        """Whether the helper is running, starting it when the run has now met
        enough new files; False when it is off, cannot start or was stopped."""
        if self._process is not None:
            return True
        if self._off:
            return False
        self._met += new_files
        if self._met < HELPER_START_FILES:
            return False
        if os.environ.get(LOAD_HELPER_ENV) == "0" or not _usable():
            self._off = True
            return False
        import subprocess

        package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (
            "import sys; sys.path[:] = sys.argv[1:]; "
            "from skillpack.discovery._parallel import _main; _main()"
        )
        try:
            self._process = subprocess.Popen(
                # Only str entries: a program may put anything in `sys.path`, and
                # imports use only those.
                [sys.executable, "-S", "-c", code, package]
                + [entry for entry in sys.path if isinstance(entry, str)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError):
            self._off = True
            return False
        os.set_blocking(self._input(), False)
        return True

    def ready(self) -> bool:
        """Whether the helper has said it is ready (checked without waiting)."""
        if not self._ready and self._readable(0):
            if _read_frame(self._output()) != _READY:
                raise HelperLost("the helper did not start as expected")
            self._ready = True
        return self._ready

    def _output(self) -> int:
        assert self._process is not None and self._process.stdout is not None
        return self._process.stdout.fileno()

    def _input(self) -> int:
        assert self._process is not None and self._process.stdin is not None
        return self._process.stdin.fileno()

    def _readable(self, timeout: float) -> bool:
        """Whether the helper's output can be read, waiting up to `timeout` seconds,
        and writing what is left of the requests whenever the helper can take it.
        (`poll`, not `select`: a server may hold more descriptors than `select` takes.)"""
        import select

        output, deadline = self._output(), time.monotonic() + timeout
        while True:
            poller = select.poll()
            poller.register(output, select.POLLIN)
            if self._unsent:
                poller.register(self._input(), select.POLLOUT)
            events = dict(poller.poll(max(0, round(timeout * 1000))))
            if events.get(self._input(), 0) & select.POLLOUT:
                self._flush()
            if events.get(output, 0):
                return True  # data, or the end of the stream (the reader sees which)
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                return False

    def _flush(self) -> None:
        """Write what the helper's input takes now of the requests not yet written.

        The input never blocks: a helper busy writing its reply reads no request,
        and this process, blocked on a write, would never read that reply."""
        while self._unsent:
            try:
                written = os.write(self._input(), self._unsent)
            except BlockingIOError:
                return
            del self._unsent[:written]

    def send(self, first: int, items: Sequence[Found], strict: bool, max_file_bytes: int) -> None:
        """Ask the helper to load `items`; its reply starts with `first`."""
        roots: dict[Root, int] = {}
        rows = tuple(
            (*snapshot_item(item), roots.setdefault(item.root, len(roots))) for item in items
        )
        request = marshal.dumps(
            (first, tuple(map(root_values, roots)), strict, max_file_bytes, rows)
        )
        self._unsent += _frame(request)
        self._flush()

    def reply(self, *, wait: bool) -> tuple[int, tuple[Any, ...]] | None:
        """The next reply `(first, results)`; None when none is waiting (`wait`
        False). Raises HelperLost when the helper fell silent or broke the protocol."""
        if not self._readable(REPLY_WAIT_S if wait else 0):
            if wait:
                raise HelperLost(f"the helper sent nothing for {REPLY_WAIT_S} s")
            return None
        frame = _read_frame(self._output())
        if frame is None:
            raise HelperLost("the helper exited")
        first, results = marshal.loads(frame)
        if type(first) is not int or type(results) is not tuple:
            raise HelperLost("the helper's reply has the wrong shape")
        return first, results

    def stop(self) -> None:
        """Stop the helper for good (this run loads alone from now on)."""
        self._off = True
        self.release()
        self.close()

    def release(self) -> None:
        """End the helper's input: it exits while this process goes on (`close` waits)."""
        if self._process is not None:
            from .._process import close_input

            close_input(self._process)

    def close(self) -> None:
        """Stop the helper and wait for it to exit; a later run may start another."""
        self.release()
        process, self._process = self._process, None
        self._ready = False
        self._unsent.clear()
        if process is not None:
            from .._process import reap

            reap(process, 1.0)


def _usable() -> bool:
    """A spare core, pipes `poll` can wait on, and a Python interpreter to start: not a
    frozen app, nor a host program embedding Python (`sys.executable` is then the
    host's own binary, which must not be run with Python's arguments)."""
    name = os.path.basename(sys.executable or "").lower()
    return (
        os.name == "posix"
        and name.startswith(("python", "pypy"))
        and not getattr(sys, "frozen", False)
        and _spare_core()
    )


def load_many(
    items: Sequence[Found],
    *,
    cache: SkillCache | None,
    strict: bool,
    max_file_bytes: int,
    helper: LoadHelper | None,
) -> list[Loaded]:
    """`load_skill_md` of each item, in order, sharing new files with `helper` (when
    given, and the run has met enough of them) as the module docstring says."""

    def load(item: Found) -> Loaded:
        return load_skill_md(item, cache=cache, strict=strict, max_file_bytes=max_file_bytes)

    if helper is None:
        return [load(item) for item in items]
    fresh = [index for index, item in enumerate(items) if unseen(item, cache)]
    if not helper.started(len(fresh)) or len(fresh) < 2 * CHUNK:
        return [load(item) for item in items]
    results: list[Loaded | None] = [None] * len(items)
    # The files the index knows cost a `stat` and a lookup each: this process's.
    new = set(fresh)
    for index, item in enumerate(items):
        if index not in new:
            results[index] = load(item)
    share = _Share(helper, items, fresh, results, strict, max_file_bytes)
    try:
        share.run(load)
    except (HelperLost, OSError, EOFError, ValueError, TypeError):
        helper.stop()
    # What the helper held when it stopped, and what it could not send back.
    return [
        load(items[index]) if loaded is None else loaded for index, loaded in enumerate(results)
    ]


@dataclass(slots=True)
class _Share:
    """One root's new files split between this process (from the front) and the helper
    (chunks from the back); `results` is filled in place."""

    helper: LoadHelper
    items: Sequence[Found]
    fresh: list[int]
    """Indexes into `items` of the files the index has never seen."""
    results: list[Loaded | None]
    strict: bool
    max_file_bytes: int
    front: int = 0
    """Files of `fresh` before this are loaded here."""
    back: int = -1
    """Files of `fresh` from this on are the helper's (all of them at first)."""
    asked: dict[int, int] = field(default_factory=dict)
    """Requests in flight: first index into `fresh` -> the index after the last."""

    def __post_init__(self) -> None:
        self.back = len(self.fresh)

    def run(self, load: Callable[[Found], Loaded]) -> None:
        fresh, items, results = self.fresh, self.items, self.results
        while self.front < self.back:
            index = fresh[self.front]
            results[index] = load(items[index])
            self.front += 1
            if self.front % POLL_EVERY == 0:
                self._exchange()
        while self.asked:
            self._take(wait=True)

    def _exchange(self) -> None:
        """Take the replies waiting, and keep the helper busy while enough is left."""
        while self.asked and self._take(wait=False):
            pass
        if not self.helper.ready():
            return
        while len(self.asked) < IN_FLIGHT and self.back - self.front > 2 * CHUNK:
            first = self.back - CHUNK
            self.helper.send(
                first,
                [self.items[index] for index in self.fresh[first : self.back]],
                self.strict,
                self.max_file_bytes,
            )
            self.asked[first] = self.back
            self.back = first

    def _take(self, *, wait: bool) -> bool:
        reply = self.helper.reply(wait=wait)
        if reply is None:
            return False
        first, answers = reply
        end = self.asked.pop(first, None)
        if end is None or len(answers) != end - first:
            raise HelperLost("the helper answered a request it was not sent")
        loads = [
            None if answer is None else _decoded(self.items[index], answer)
            for index, answer in zip(self.fresh[first:end], answers, strict=True)
        ]
        for index, loaded in zip(self.fresh[first:end], loads, strict=True):
            self.results[index] = loaded
        return True


def _decoded(item: Found, answer: tuple[Any, ...]) -> Loaded:
    """A helper's `_result` for `item` as `load_skill_md` would have returned it."""
    stat, values, problems = answer
    loaded = None if stat is None else tuple.__new__(Found, item[:5] + tuple(stat) + item[9:])
    return (
        loaded,
        None if values is None else skill_from_values(values),
        problems_from_values(problems),
    )
