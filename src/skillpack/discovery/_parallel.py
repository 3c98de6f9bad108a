"""Loading a big catalog's new SKILL.md files on two cores: this process and one helper.

A cold scan spends most of its time reading and parsing files one after another
while a second core idles. `LoadHelper` is one helper process per discovery run,
started once the run has met `HELPER_START_FILES` files the index has never seen
and only on a machine with a spare core. It runs this very copy of skillpack
(`python -S -c`, with this process's interpreter flags and `sys.path`) and serves `serve_loads`: the
same `load_skill_md`, on the same file, sending each result back as the index
stores it (marshal of `skill_values` and `problem_values`). So a file gives the
same Skill and problems whichever process read it.

`RootLoads` shares one root's files. While this process walks the root, it hands the
helper chunks of `CHUNK` new files from the front of what the walk has found, so the
other core loads while this one lists folders. Then this process loads from where
those end, and hands the helper chunks from the back, until the two meet. The helper
holds at most `IN_FLIGHT` chunks at a time, and gets none before it has said it is
ready: nothing waits on its start-up, and until then this process loads alone.

The helper only speeds things up; it never decides anything. If it cannot start,
dies, falls silent for `REPLY_WAIT_S`, or sends back something that does not
decode, it is stopped and this process loads the files it held. A result marshal
cannot hold (a value of a type it has no code for) comes back as "load it yourself".
`DiscoveryOptions(load_helper=False)` turns the helper off for a run (True leaves it
to the machine whatever the environment says); left at None, `SKILLPACK_LOAD_HELPER=0`
in the environment turns it off.
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
"""`0` turns the helper off (any other value, or none, leaves it to the machine): the
default of `DiscoveryOptions.load_helper`."""
HELPER_START_FILES: Final = 1000
"""New files a run must meet before a helper is worth its start-up (about 80 ms of the
other core; this process pays only the spawn)."""
CHUNK: Final = 48
"""Files per request, the unit the two sides split by: small, so that at the end of a
root neither waits long on the other (48 files are about 4 ms of loading)."""
POLL_EVERY: Final = 8
"""Files this process loads, or its walk finds, between two looks at the helper's
replies (a `poll` call)."""
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
    files (`HELPER_START_FILES`); `close` stops it. Not shared between threads.

    `enabled` is `DiscoveryOptions.load_helper`: False never starts one, True leaves it
    to the machine (a spare core), None asks the environment first (`LOAD_HELPER_ENV`).
    """

    def __init__(self, *, enabled: bool | None = None) -> None:
        self._enabled = enabled
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
        if not helper_wanted(self._enabled) or not _usable():
            self._off = True
            return False
        import subprocess

        package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (
            "import sys; sys.path[:] = sys.argv[1:]; "
            "from skillpack.discovery._parallel import _main; _main()"
        )
        # This interpreter's flags first (`-I`, `-E`, `-s`, `-P`, `-B`, `-X`, `-W`...),
        # by the standard library's own rule: a helper of a `python -I` run must not
        # read PYTHONPATH, which would let a planted `encodings` run at its start.
        flags: list[str] = subprocess._args_from_interpreter_flags()  # type: ignore[attr-defined]
        try:
            self._process = subprocess.Popen(
                # Only str entries: a program may put anything in `sys.path`, and
                # imports use only those.
                [sys.executable, *flags, "-S", "-c", code, package]
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


def helper_wanted(enabled: bool | None) -> bool:
    """Whether a run may start a helper: `enabled` when given, else unless the
    environment says `SKILLPACK_LOAD_HELPER=0`."""
    if enabled is not None:
        return enabled
    return os.environ.get(LOAD_HELPER_ENV) != "0"


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


class RootLoads:
    """One root's SKILL.md files, as its walk finds them: claimed in the order found
    (a real path `claimed` already holds, an earlier root's, is skipped), then loaded
    here or by the run's helper.

    The walk calls `walked` after each file it finds. With a helper, that hands it
    chunks of new files from the front while the walk goes on, so the other core
    loads while this one lists folders; `finish` shares what is left as the module
    docstring says.
    """

    def __init__(
        self,
        claimed: set[str],
        *,
        cache: SkillCache | None,
        strict: bool,
        max_file_bytes: int,
        helper: LoadHelper | None,
    ) -> None:
        self.found: list[Found] = []
        """What the walk found, in order (it appends here)."""
        self.mine: list[Found] = []
        """The files of `found` this root claimed, in order."""
        self.skipped: list[str] = []
        """The real paths of `found` an earlier root claimed."""
        self._claimed = claimed
        self._cache = cache
        self._strict = strict
        self._max_file_bytes = max_file_bytes
        self._helper = helper
        self._fresh: list[int] = []  # indexes into `mine` of files the index never saw
        self._share: _Share | None = None
        self._met = 0  # files of `found` claimed or skipped so far

    def walked(self) -> None:
        """Called by the walk after each file it finds: now and then, claim the new
        ones and keep the helper busy with them."""
        if len(self.found) - self._met >= POLL_EVERY and self._helper is not None:
            self._claim()
            if self._share is not None:
                self._shared(self._share.feed)

    def finish(self) -> list[Loaded]:
        """`load_skill_md` of each file this root claimed, in the order found."""
        self._claim()
        items, share = self.mine, self._share

        def load(item: Found) -> Loaded:
            return load_skill_md(
                item, cache=self._cache, strict=self._strict, max_file_bytes=self._max_file_bytes
            )

        results: list[Loaded | None] = [None] * len(items)
        # Fewer new files than two chunks, none sent yet: not worth the helper.
        if (
            share is not None
            and self._helper is not None
            and (share.front or len(share.fresh) >= 2 * CHUNK)
        ):
            new = set(share.fresh)
            # The files the index knows cost a `stat` and a lookup each: this process's.
            for index, item in enumerate(items):
                if index not in new:
                    results[index] = load(item)
            self._shared(lambda: share.run(load))
        held = {} if share is None else share.results
        return [
            # What the helper held when it stopped, and what it could not send back,
            # load here.
            loaded or held.get(index) or load(items[index])
            for index, loaded in enumerate(results)
        ]

    def _claim(self) -> None:
        """Claim the files found since the last call, noting the new ones for the
        helper, which starts once the run has met enough of them."""
        found, mine, claimed, fresh = self.found, self.mine, self._claimed, self._fresh
        known = len(fresh)
        for item in found[self._met :]:
            if item.real_path in claimed:
                self.skipped.append(item.real_path)
                continue
            claimed.add(item.real_path)
            if unseen(item, self._cache):
                fresh.append(len(mine))
            mine.append(item)
        self._met = len(found)
        helper = self._helper
        if self._share is None and helper is not None and helper.started(len(fresh) - known):
            self._share = _Share(helper, mine, fresh, self._strict, self._max_file_bytes)

    def _shared(self, step: Callable[[], None]) -> None:
        """Run one step of the sharing; on any failure, stop the helper for the run
        (the share keeps what it sent back; the files it held load here)."""
        try:
            step()
        except (HelperLost, OSError, EOFError, ValueError, TypeError):
            if self._helper is not None:
                self._helper.stop()
            self._helper = None


@dataclass(slots=True)
class _Share:
    """One root's new files split between this process and the helper. While the walk
    goes on, the helper gets chunks from the front (`feed`); then this process loads
    from where those end and the helper takes chunks from the back (`run`)."""

    helper: LoadHelper
    items: Sequence[Found]
    """The root's claimed files (the list grows while the walk goes on)."""
    fresh: list[int]
    """Indexes into `items` of the files the index has never seen (grows too)."""
    strict: bool
    max_file_bytes: int
    results: dict[int, Loaded] = field(default_factory=dict)
    """Loads by index into `items`: the helper's, and this process's in `run`."""
    front: int = 0
    """Files of `fresh` before this are taken: the helper's chunks from the walk, then
    the ones loaded here."""
    back: int = 0
    """In `run`, files of `fresh` from this on are the helper's."""
    asked: dict[int, int] = field(default_factory=dict)
    """Requests in flight: first index into `fresh` -> the index after the last."""

    def feed(self) -> None:
        """While the walk goes on: take the replies waiting, and send the helper the
        next chunks of new files from the front while it can hold them."""
        if not self._taken():
            return
        while len(self.asked) < IN_FLIGHT and len(self.fresh) - self.front >= CHUNK:
            self._ask(self.front, self.front + CHUNK)
            self.front += CHUNK

    def run(self, load: Callable[[Found], Loaded]) -> None:
        fresh, items, results = self.fresh, self.items, self.results
        self.back = len(fresh)
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
        if not self._taken():
            return
        while len(self.asked) < IN_FLIGHT and self.back - self.front > 2 * CHUNK:
            first = self.back - CHUNK
            self._ask(first, self.back)
            self.back = first

    def _taken(self) -> bool:
        """Take the replies waiting; whether the helper is ready for more."""
        while self.asked and self._take(wait=False):
            pass
        return self.helper.ready()

    def _ask(self, first: int, end: int) -> None:
        self.helper.send(
            first,
            [self.items[index] for index in self.fresh[first:end]],
            self.strict,
            self.max_file_bytes,
        )
        self.asked[first] = end

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
            if loaded is not None:
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
