"""Installs from registries, git and archives: digests, fetch, audit, lock, atomic swap.

The library surface (loaded on first use)::

    from skillpack.install import install, approve_all
    outcome = install("https://example.com", all_skills=True, approve=approve_all)

`install`, `install_system`, `update`, `remove`, `doctor`, `publish`, `audit_folder`
and `audit_text`; every change takes an `approve(plan) -> bool` callback that sees
what each skill is and its audit before anything is written. A runtime-level
package: it imports discovery, parse and config, never a surface.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load_lazy

if TYPE_CHECKING:
    from ._audit import Finding, audit_text
    from ._collect import audit_folder
    from ._doctor import DoctorReport, doctor
    from ._installer import Outcome, approve_all, install, install_system, remove, update
    from ._plan import Plan, PlanItem
    from ._publish import PublishReport, publish
    from ._values import Limits, Refusal

_LAZY = {
    "DoctorReport": "._doctor",
    "Finding": "._audit",
    "Limits": "._values",
    "Outcome": "._installer",
    "Plan": "._plan",
    "PlanItem": "._plan",
    "PublishReport": "._publish",
    "Refusal": "._values",
    "approve_all": "._installer",
    "audit_folder": "._collect",
    "audit_text": "._audit",
    "doctor": "._doctor",
    "install": "._installer",
    "install_system": "._installer",
    "publish": "._publish",
    "remove": "._installer",
    "update": "._installer",
}

__all__ = [
    "DoctorReport",
    "Finding",
    "Limits",
    "Outcome",
    "Plan",
    "PlanItem",
    "PublishReport",
    "Refusal",
    "approve_all",
    "audit_folder",
    "audit_text",
    "doctor",
    "install",
    "install_system",
    "publish",
    "remove",
    "update",
]


def __getattr__(name: str) -> Any:
    return load_lazy(name, _LAZY, package=__name__, anchor=__name__, namespace=globals())
