"""Fast constructors for the frozen `Skill`, shared by the parser and the index.

A frozen dataclass's `__init__` sets each of Skill's ~35 fields with
`object.__setattr__`, which costs as much as the rest of a frontmatter parse, and a
warm run builds every cached skill. The constructors here are generated as
`dataclasses` generates `__init__`, but fill a plain object of `_Blank`, a class with
Skill's slots and no frozen `__setattr__` (so each field is one specialized slot
store), then make it a Skill by assigning `__class__`, which Python allows between
classes of the same slot layout. That costs less than half of setting each slot
through its descriptor. It is only valid while Skill has no `__post_init__`, every
field is an `__init__` argument and the slots are exactly the fields; `FAST` says
so, and callers fall back to `Skill(...)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._model import Skill

FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Skill))


class _Blank:
    """Skill's slot layout without its frozen `__setattr__`: built, then turned into a Skill."""

    __slots__ = FIELDS


def _layout_matches() -> bool:
    """Whether a `_Blank` can become a Skill (same slots, nothing else per object)."""
    if getattr(Skill, "__slots__", None) != FIELDS:
        return False
    blank = object.__new__(_Blank)
    try:
        blank.__class__ = Skill  # type: ignore[assignment]
    except TypeError:
        return False
    return True


FAST = (
    not hasattr(Skill, "__post_init__")
    and all(f.init for f in dataclasses.fields(Skill))
    and _layout_matches()
)


def compile_constructor(
    header: str,
    prelude: Sequence[str],
    namespace: Mapping[str, Any],
    values: Sequence[str],
) -> Callable[..., Skill]:
    """Generate `def <header>: <prelude>; skill = new(_Blank); set each field;
    skill.__class__ = Skill; return skill`.

    Args:
        header: The signature, e.g. `from_values(values)`.
        prelude: Body lines run first (unpacking, defaults, conversions).
        namespace: Names the generated code uses besides `new`, `Blank`, `Skill`.
        values: For each field in `FIELDS` order, the expression giving its value.
    """
    scope: dict[str, Any] = {"new": object.__new__, "Blank": _Blank, "Skill": Skill, **namespace}
    lines = [f"def {header}:", *(f"    {line}" for line in prelude), "    skill = new(Blank)"]
    lines += [f"    skill.{name} = {value}" for name, value in zip(FIELDS, values, strict=True)]
    lines += ["    skill.__class__ = Skill", "    return skill"]
    exec("\n".join(lines), scope)
    built: Callable[..., Skill] = scope[header.partition("(")[0]]
    return built


def _keyword_constructor() -> Callable[..., Skill]:
    """`Skill(**fields)`: same keywords and defaults, a fresh object per default factory."""
    missing = dataclasses.MISSING
    namespace: dict[str, Any] = {"MISSING": missing}
    params: list[str] = []
    prelude: list[str] = []
    for i, f in enumerate(dataclasses.fields(Skill)):
        if f.default is not missing:
            namespace[f"default{i}"] = f.default
            params.append(f"{f.name}=default{i}")
        elif f.default_factory is not missing:
            namespace[f"factory{i}"] = f.default_factory
            params.append(f"{f.name}=MISSING")
            prelude.append(f"if {f.name} is MISSING: {f.name} = factory{i}()")
        else:
            params.append(f.name)
    return compile_constructor(f"new_skill(*, {', '.join(params)})", prelude, namespace, FIELDS)


new_skill: Callable[..., Skill] = _keyword_constructor() if FAST else Skill
"""`Skill(**fields)`, faster; identical result."""
