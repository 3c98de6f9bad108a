"""docs/catalog.md and the README's catalog section are what the allocator gives today,
at 10, 300 and 3,000 made-up skills (`python docs/gen_catalog_doc.py` rewrites them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

GENERATOR = Path(__file__).resolve().parents[1] / "docs" / "gen_catalog_doc.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_catalog_doc", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_catalog_pages_are_current() -> None:
    for path, text in generator().rendered_files().items():
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is stale: run python docs/gen_catalog_doc.py"
        )


def test_the_pages_show_a_full_catalog_names_and_the_deferred_stub() -> None:
    module = generator()
    small, middle, large = (module.catalog(count).report for count in module.SIZES)
    assert (small.total, small.truncated) == (10, False)
    assert middle.shown == middle.total == 300 and middle.names_only and not middle.omitted
    assert large.total == 3000 and large.deferred
    names = [s.name for s in module.generated_skills(3000)]
    assert len(set(names)) == len(names)
