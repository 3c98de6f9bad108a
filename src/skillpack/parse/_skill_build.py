"""Fast constructors for the frozen `Skill`, shared by the parser and the index.

A frozen dataclass's `__init__` sets each of Skill's ~35 fields with
`object.__setattr__`, which costs as much as the rest of a frontmatter parse, and a
warm run builds every cached skill. The constructors here are generated as
`dataclasses` generates `__init__`, but set each slot through its descriptor (as
pickle does). That is only valid while Skill has no `__post_init__` and every field
is an `__init__` argument; `FAST` says so, and callers fall back to `Skill(...)`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._model import Skill

FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Skill))
FAST = not hasattr(Skill, "__post_init__") and all(f.init for f in dataclasses.fields(Skill))


def compile_constructor(
    header: str,
    prelude: Sequence[str],
    namespace: Mapping[str, Any],
    values: Sequence[str],
) -> Callable[..., Skill]:
    """Generate `def <header>: <prelude>; skill = new(Skill); set each slot; return skill`.

    Args:
        header: The signature, e.g. `from_values(values)`.
        prelude: Body lines run first (unpacking, defaults, conversions).
        namespace: Names the generated code uses besides `new`, `Skill`, `set<i>`.
        values: For each field in `FIELDS` order, the expression giving its value.
    """
    scope: dict[str, Any] = {"new": object.__new__, "Skill": Skill, **namespace}
    scope.update((f"set{i}", vars(Skill)[name].__set__) for i, name in enumerate(FIELDS))
    lines = [f"def {header}:", *(f"    {line}" for line in prelude), "    skill = new(Skill)"]
    lines += [f"    set{i}(skill, {value})" for i, value in enumerate(values)]
    lines.append("    return skill")
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
