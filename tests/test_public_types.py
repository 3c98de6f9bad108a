"""Every type a public signature names can be imported from a public module.

The public modules are `skillpack`, `skillpack.types`, `skillpack.install`,
`skillpack.rpc`, `skillpack.mcp` and the framework modules of `skillpack.integrations`.
A public signature is one of a callable they export, or of a public method, property
or annotated field (a dataclass field, a `TypedDict` key) of a class they export or
that such a signature names. Each skillpack type in those annotations must be exported
by a public module; standard-library and third-party types are the host's own.

Names are resolved the way a type checker reads them: through the imports of the module
that wrote the annotation (those under `TYPE_CHECKING` included), so a type imported
from a private module is found even though it is never imported at run time.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from functools import cache
from types import ModuleType
from typing import Any, ForwardRef, TypeVar

import pytest

PUBLIC_MODULES = (
    "skillpack",
    "skillpack.types",
    "skillpack.install",
    "skillpack.rpc",
    "skillpack.mcp",
    "skillpack.integrations.langchain",
    "skillpack.integrations.openai_agents",
    "skillpack.integrations.pydantic_ai",
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")  # literal values, not type names


def _modules() -> list[ModuleType]:
    return [importlib.import_module(name) for name in PUBLIC_MODULES]


def _public_ids() -> set[int]:
    return {id(getattr(module, name)) for module in _modules() for name in module.__all__}


def _public_aliases() -> list[Any]:
    """The exported type aliases (`Literal[...]`, `Callable[...]`): one written alike
    in a private module is the same type, whether or not `typing` cached it as the
    same object."""
    return [
        value
        for module in _modules()
        for name in module.__all__
        if not inspect.isclass(value := getattr(module, name)) and hasattr(value, "__origin__")
    ]


@cache
def _bindings(module_name: str) -> dict[str, tuple[str, str | None]]:
    """Each name `module_name` binds at top level (imports under `TYPE_CHECKING` too):
    name -> (module it comes from, attribute there, or None for a module itself)."""
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    path = getattr(module, "__file__", None)
    if path is None:
        return {}
    with open(path, encoding="utf-8") as file:
        tree = ast.parse(file.read())
    package = module_name if path.endswith("__init__.py") else module_name.rpartition(".")[0]
    found: dict[str, tuple[str, str | None]] = {}
    nodes: list[ast.stmt] = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:`, `try: import`
            nodes.extend(node.body + node.orelse)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            if node.level and not node.module:
                base = base.rstrip(".")
            for alias in node.names:
                found[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = (module_name, node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = (module_name, target.id)
    return found


def _resolve(module_name: str, dotted: str) -> tuple[str, Any] | None:
    """Where a name written in `module_name` comes from: (module, the object), or None
    for a builtin or a name this check cannot follow."""
    first, *rest = dotted.split(".")
    binding = _bindings(module_name).get(first)
    if binding is None:
        return None
    source, attr = binding
    if not source.startswith("skillpack"):
        return (source, None)  # the standard library or a third party: the host's own
    value: Any = importlib.import_module(source)
    where = source
    if attr is not None:
        try:
            value = getattr(value, attr)
        except AttributeError:
            value = importlib.import_module(f"{source}.{attr}")
    for part in rest:
        if inspect.ismodule(value):
            where = value.__name__
        value = getattr(value, part)
    return (where, value)


def _annotation_types(module_name: str, annotation: Any) -> Iterator[tuple[str, Any]]:
    """Each skillpack value `annotation` (text or object) names: (its name, the object)."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return
    if isinstance(annotation, str):
        for dotted in _NAME.findall(_QUOTED.sub("", annotation)):
            if dotted in vars(builtins):
                continue
            found = _resolve(module_name, dotted)
            if found is None:
                raise AssertionError(f"{module_name}: cannot tell where {dotted!r} comes from")
            if found[0].startswith("skillpack"):
                yield f"{found[0]}.{dotted.split('.')[-1]}", found[1]
        return
    if inspect.isclass(annotation) and annotation.__module__.startswith("skillpack"):
        yield f"{annotation.__module__}.{annotation.__name__}", annotation
    if isinstance(annotation, ForwardRef):
        yield from _annotation_types(module_name, annotation.__forward_arg__)
        return
    for arg in getattr(annotation, "__args__", ()):
        if not isinstance(arg, str):  # a string here is a `Literal` value
            yield from _annotation_types(module_name, arg)


def _callable_types(func: Callable[..., Any]) -> Iterator[tuple[str, Any]]:
    func = inspect.unwrap(func)
    module_name = getattr(func, "__module__", None)
    if not module_name or not module_name.startswith("skillpack"):
        return
    annotations = getattr(func, "__annotations__", {})
    for parameter, annotation in annotations.items():
        if not parameter.startswith("_"):  # a private parameter is no host's option
            yield from _annotation_types(module_name, annotation)


def _class_members(cls: type) -> Iterator[tuple[str, Iterator[tuple[str, Any]]]]:
    """Each public member of `cls` written in skillpack, with the types it names."""
    for owner in cls.__mro__:
        if not owner.__module__.startswith("skillpack"):
            continue
        for attr, annotation in vars(owner).get("__annotations__", {}).items():
            if not attr.startswith("_"):
                yield attr, _annotation_types(owner.__module__, annotation)
        for attr, member in vars(owner).items():
            if attr.startswith("_") and attr != "__init__":
                continue
            if isinstance(member, classmethod | staticmethod):
                member = member.__func__
            if isinstance(member, property):
                if member.fget is not None:
                    yield attr, _callable_types(member.fget)
            elif inspect.isfunction(member):
                yield attr, _callable_types(member)


def private_types() -> dict[str, set[str]]:
    """Each skillpack type a public signature names that no public module exports:
    `module.Name` -> the signatures naming it."""
    public = _public_ids()
    aliases = _public_aliases()
    found: dict[str, set[str]] = {}
    seen: set[int] = set()
    todo: list[tuple[str, Any]] = [
        (f"{module.__name__}.{name}", getattr(module, name))
        for module in _modules()
        for name in module.__all__
    ]
    while todo:
        where, obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        members: Iterator[tuple[str, Iterator[tuple[str, Any]]]]
        if inspect.isclass(obj):
            members = ((f"{where}.{attr}", types) for attr, types in _class_members(obj))
        elif callable(obj) and not isinstance(obj, TypeVar):
            members = iter([(where, _callable_types(obj))])
        else:
            continue
        for member, types in members:
            for name, value in types:
                if isinstance(value, TypeVar) or inspect.ismodule(value):
                    continue
                if id(value) in public:
                    todo.append((name, value))  # its own members are public signatures too
                    continue
                if hasattr(value, "__origin__") and any(value == alias for alias in aliases):
                    continue
                found.setdefault(name, set()).add(member)
    return found


def test_every_type_in_a_public_signature_is_public() -> None:
    private = private_types()
    report = "; ".join(
        f"{name} (in {', '.join(sorted(where)[:3])})" for name, where in private.items()
    )
    assert not private, "export these from skillpack.types: " + report


def test_the_check_sees_the_signatures_it_guards() -> None:
    # A private type in a method, a field and a framework adapter is each found.
    seen = dict(_class_members(importlib.import_module("skillpack.runtime._session").Session))
    assert "skillpack.runtime._inject.Injection" in {name for name, _ in seen["inject"]}
    skill = importlib.import_module("skillpack").Skill
    names = {name for _, types in _class_members(skill) for name, _ in types}
    assert "skillpack._model.Scope" in names
    turn = importlib.import_module("skillpack.rpc._types").TurnResult  # a TypedDict's keys
    keys = {name for _, types in _class_members(turn) for name, _ in types}
    assert "skillpack.rpc._types.ActivationEntry" in keys
    assert _resolve("skillpack.runtime._session", "Injection") is not None


def test_a_type_left_in_a_private_module_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import skillpack.types

    kept = [name for name in skillpack.types.__all__ if name != "Injection"]
    monkeypatch.setattr(skillpack.types, "__all__", kept)
    assert "skillpack.runtime._inject.Injection" in private_types()


def test_every_name_of_skillpack_types_resolves_and_the_list_is_sorted() -> None:
    import skillpack.types

    assert list(skillpack.types.__all__) == sorted(set(skillpack.types.__all__))
    for name in skillpack.types.__all__:
        assert getattr(skillpack.types, name) is not None, name


def test_every_dataclass_field_of_a_public_value_is_seen() -> None:
    import skillpack

    fields = {field.name for field in dataclasses.fields(skillpack.Skill)}
    members = {attr for attr, _ in _class_members(skillpack.Skill)}
    assert fields <= members
