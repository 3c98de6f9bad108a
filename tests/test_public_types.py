"""Every type a public signature names can be imported from a public module.

A public signature is one of a callable `skillpack` exports, or a public method or
property of a class it exports. Each name in their annotations must be exported by
`skillpack` or `skillpack.types`, or be a builtin or a standard-library generic.
"""

from __future__ import annotations

import builtins
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import skillpack
import skillpack.types

STANDARD = set(dir(builtins)) | {
    "Any",
    "AsyncIterator",
    "Awaitable",
    "Callable",
    "ClassVar",
    "Collection",
    "Final",
    "Hashable",
    "Iterable",
    "Iterator",
    "Literal",
    "Mapping",
    "Path",
    "PathLike",
    "Self",
    "Sequence",
    "ToolT",
    "TypeVar",
    "Connection",
    "os",
    "sqlite3",
    "pathlib",
}
"""Builtins, `typing`/`collections.abc`/`pathlib`/`os`/`sqlite3` names, type variables."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")  # literal values, not type names


def _names(annotation: Any) -> set[str]:
    if annotation is inspect.Parameter.empty:
        return set()
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return {name.split(".")[-1] for name in _NAME.findall(_QUOTED.sub("", text))}


def _signature_names(obj: Callable[..., Any]) -> set[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return set()
    found = _names(signature.return_annotation)
    for parameter in signature.parameters.values():
        found |= _names(parameter.annotation)
    return found


def _public_signatures() -> Iterator[tuple[str, set[str]]]:
    for export in skillpack.__all__:
        obj = getattr(skillpack, export)
        if not inspect.isclass(obj):
            if callable(obj):
                yield export, _signature_names(obj)
            continue
        for attr, member in vars(obj).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            if isinstance(member, classmethod | staticmethod):
                member = member.__func__
            if isinstance(member, property) and member.fget is not None:
                yield f"{export}.{attr}", _names(inspect.signature(member.fget).return_annotation)
            elif callable(member):
                yield f"{export}.{attr}", _signature_names(member)


def test_every_type_in_a_public_signature_is_public() -> None:
    public = set(skillpack.__all__) | set(skillpack.types.__all__) | STANDARD
    private = {
        f"{where}: {name}"
        for where, names in _public_signatures()
        for name in names
        if name not in public
    }
    assert not private, "import these from skillpack.types: " + ", ".join(sorted(private))


def test_the_check_sees_the_signatures_it_guards() -> None:
    seen = dict(_public_signatures())
    assert "Injection" in seen["Session.inject"]
    assert "SkillReader" in seen["Session.__init__"]


def test_every_name_of_skillpack_types_resolves_and_the_list_is_sorted() -> None:
    assert list(skillpack.types.__all__) == sorted(set(skillpack.types.__all__))
    for name in skillpack.types.__all__:
        assert getattr(skillpack.types, name) is not None, name
