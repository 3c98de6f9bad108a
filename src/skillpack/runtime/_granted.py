"""What a server keeps per grant: one value over a session restricted to it.

A server with `[[auth.grant]]` serves each request in a session of its caller's grant
(`Session(grant=...)`). `Granted` keeps, per grant, what the server builds over such
a session (the MCP server's pages, `serve`'s view of a workspace): at most `MAX_GRANTS`,
the least recently used dropped, built again when the server's session has a new
config, and moved onto its current catalog on every use (a no-op unless it changed).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Generic, TypeVar

if TYPE_CHECKING:
    from ..select._grants import SkillGrant
    from ._session import Session

MAX_GRANTS: Final = 64
"""Grants (distinct sets of skill patterns) whose values are kept."""

T = TypeVar("T")


class Granted(Generic[T]):
    """Values per grant over conversations of `root` restricted to it (thread-safe).

    `build(session)` makes the value over a new restricted session; `session_of(value)`
    gives that session back.
    """

    def __init__(
        self,
        root: Session,
        *,
        build: Callable[[Session], T],
        session_of: Callable[[T], Session],
        most: int = MAX_GRANTS,
    ) -> None:
        self.root = root
        self.build = build
        self.session_of = session_of
        self.most = most
        self._kept: OrderedDict[SkillGrant, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, grant: SkillGrant, **conversation: object) -> T:
        """The value of `grant`, on the root's current catalog and config;
        `conversation` keywords go to `Session.conversation` when it is built."""
        root = self.root
        with self._lock:
            found = self._kept.get(grant)
            if found is not None and self.session_of(found).config is root.config:
                self._kept.move_to_end(grant)
            else:
                found = self.build(root.conversation(grant=grant, **conversation))
                self._kept[grant] = found
                while len(self._kept) > self.most:
                    self._kept.popitem(last=False)
        self.session_of(found).refresh(root.catalog)  # a no-op unless it changed
        return found

    def __len__(self) -> int:
        return len(self._kept)
