"""What to take from a source (`Request`) and what it offered (`Offer`): the values every
resolver (`_resolve`, `_oci_resolve`) takes and returns."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from .._errors import UsageError
from ._source import Source
from ._values import Resolved


@dataclass(kw_only=True)
class Request:
    """What to take from a source."""

    wanted: Collection[str] | None = None
    """Skill names to take; None takes every skill."""
    known: Mapping[str, str] = field(default_factory=dict)
    """name -> artifact digest already installed: such site entries are not fetched."""
    single: bool = False
    """With `wanted` None: take the only skill; a source offering several is an error."""

    def check(self, offered: Collection[str], source: Source) -> None:
        """Raise when the request needs one skill and the source offers several.

        Raises:
            UsageError: listing the names to choose from.
        """
        if self.wanted is None and self.single and len(offered) > 1:
            names = ", ".join(sorted(offered))
            raise UsageError(
                f"{source.text} offers {len(offered)} skills: {names}. Choose with "
                "--skill NAME (repeatable) or take them all with --all."
            )


@dataclass(frozen=True, kw_only=True, slots=True)
class Offer:
    """What a source resolved to, before selection errors are added."""

    resolved: Resolved
    offered: tuple[str, ...]
    """Every skill name the source offers (for "no skill named X" messages)."""
    unchanged: tuple[str, ...] = ()
    """Names skipped because their artifact digest equals the known one."""
