"""Catalog entries name each skill as a model should ask for it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from skill_snapshots import make_skill

from skillpack.render._catalog import entry_chars, render_catalog
from skillpack.render._formats import CatalogFormat


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
def test_a_plugin_skill_is_listed_under_its_plugin_id(fmt: CatalogFormat) -> None:
    # Two `near` skills: a bare name means the plain one, so the plugin's is listed
    # as `geo:near` and a model asking for it names it so.
    plain = make_skill("near", "Find nearby places.")
    plugin = replace(make_skill("near", "Nearest neighbours."), plugin="geo")
    text = render_catalog([plain, plugin], format=fmt).text
    assert "geo:near" in text
    assert text.count("near") - text.count("geo:near") >= 1
    # Sizing counts the name as listed.
    as_named = replace(plugin, plugin=None, name="geo:near")
    assert entry_chars([plugin], format=fmt) == entry_chars([as_named], format=fmt)
