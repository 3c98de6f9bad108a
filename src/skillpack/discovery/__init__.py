"""I/O. The filesystem seam: roots, the bounded walk, loading, snapshot replay,
bundled-file access and the in-memory twin. Imports the pure packages and `index`.

Public here: `DiscoveryOptions` (what to discover and how, one value), loaded on
first use like the names of `skillpack`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load_lazy

if TYPE_CHECKING:
    from ._options import DiscoveryOptions

_LAZY = {"DiscoveryOptions": "._options"}


def __getattr__(name: str) -> Any:
    return load_lazy(name, _LAZY, package=__name__, anchor=__name__, namespace=globals())


__all__ = ["DiscoveryOptions"]
