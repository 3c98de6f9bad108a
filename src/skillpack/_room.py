"""What a full session table does: the one rule of `skillpack mcp --transport http` and
`skillpack serve`.

A server keeps at most `cap` client sessions, and a new client is never locked out by
sessions that earlier clients abandoned: while the table is full, the session used
least recently among those with no request in flight is closed and the new client
takes its place. Only when every session is busy is the new client refused (each
server answers that in its own form). The choice is part of the admission: the caller
holds its table's lock from `SessionRoom.choose` until the new session is in the
table, so two clients arriving at once cannot both take the one place made. Each of
the two conditions (sessions closed to make room; a new client refused) is one log
line per episode (`_httpguard.Episodes`), however many clients arrive in it.

Each server says how its own entries tell when they were last used and whether a
request is in flight; this module knows nothing of either server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping
from typing import Final, TypeVar

from ._httpguard import Episodes

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

EVICTING: Final = "evicting"
"""The episode of closing idle sessions to admit new clients."""
REFUSING: Final = "refusing"
"""The episode of refusing new clients: every session busy."""
_ONCE: Final = " (Logged once per episode.)"


class SessionRoom:
    """A session table's cap and what happens at it (module docstring).

    `evicting` and `refusing` are the server's own lines for the two episodes (what
    the client sees, how to avoid it); `log` is where they go.
    """

    def __init__(
        self,
        *,
        cap: int,
        log: logging.Logger,
        evicting: str,
        refusing: str,
        episodes: Episodes | None = None,
    ) -> None:
        if cap < 1:
            raise ValueError(f"A session table holds at least one session, not {cap}.")
        self.cap = cap
        self.log = log
        self.lines = {EVICTING: evicting + _ONCE, REFUSING: refusing + _ONCE}
        self.episodes = episodes or Episodes()

    def choose(
        self,
        table: Mapping[K, V],
        *,
        last_used: Callable[[V], float],
        busy: Callable[[V], bool],
    ) -> K | None:
        """The session to close so that a new one fits in `table`: the one with the
        earliest `last_used` among those not `busy`. None when the table has room, or
        when every session is busy (`full` then says the new client is refused).

        Call it holding the lock that guards `table`, remove the session chosen and
        add the new one before letting go of it.
        """
        if len(table) < self.cap:
            return None
        idle = [(last_used(entry), key) for key, entry in table.items() if not busy(entry)]
        if not idle:
            self._said(REFUSING)
            return None
        self._said(EVICTING)
        return min(idle, key=lambda pair: pair[0])[1]

    def full(self, table: Mapping[K, V]) -> bool:
        """Whether `table` has no place for a new session (after `choose`)."""
        return len(table) >= self.cap

    def _said(self, kind: str) -> None:
        if self.episodes.begins(kind):
            self.log.warning(self.lines[kind])
