"""The public namespace is exactly `__all__`, sorted, and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import skillpack


def test_all_is_sorted_and_unique() -> None:
    assert list(skillpack.__all__) == sorted(set(skillpack.__all__))


def test_every_exported_name_resolves() -> None:
    for name in skillpack.__all__:
        assert getattr(skillpack, name) is not None, name


def test_public_names_are_exactly_all() -> None:
    public = {name for name in dir(skillpack) if not name.startswith("_")}
    assert public == set(skillpack.__all__) - {"__version__"}


def test_import_is_cheap_and_loads_no_heavy_modules() -> None:
    code = (
        "import sys, skillpack; "
        "heavy = {'yaml', 'sqlite3', 'click', 'rich', 'tomllib', 'dataclasses', "
        "'skillpack._model', 'skillpack.discovery._discover'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


def test_a_host_completes_mentions_without_private_imports() -> None:
    # a `$`/`/` popup needs only the public helper and its row type.
    assert {"complete_mention", "Completion"} <= set(skillpack.__all__)
    assert skillpack.complete_mention.__module__ == "skillpack.runtime._complete"
