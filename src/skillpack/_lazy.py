"""Names a package loads on first use (PEP 562): the one `__getattr__` body that
`skillpack`, `skillpack.types`, `skillpack.install` and `skillpack.mcp` share, so
that importing a package stays cheap and its public names still resolve."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def load_lazy(
    name: str, table: Mapping[str, str], *, package: str, anchor: str, namespace: dict[str, Any]
) -> Any:
    """The attribute `name` of `package`: imported from the module `table` names for it
    (relative to `anchor`), then kept in `namespace` so the next access is direct. A
    value `module:attribute` exports that module's `attribute` as `name` (a private
    alias such as `Severity` given a public name that does not clash).

    Raises:
        AttributeError: `table` does not name it.
    """
    module_name = table.get(name)
    if module_name is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module_name, _, attribute = module_name.partition(":")
    value = getattr(importlib.import_module(module_name, anchor), attribute or name)
    namespace[name] = value
    return value
