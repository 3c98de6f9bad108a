"""Snapshots of the picker's screens (pytest-textual-snapshot).

Fixed terminal sizes, a fixed tree (`picker_tree`) under folders whose paths have
a fixed length (the catalog's size counts them), paths shown relative to the
project or from `~`, the manual refresh mode and no cursor blink: the SVGs under
`__snapshots__/` change only when what a person sees changes. After a deliberate
change of the screens, refresh them with `pytest tests/tui --snapshot-update` and
look at the new SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual", reason="the picker is the `tui` extra")

from picker_tree import build_tree, fixed_length_dir, open_session, workers_done  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

from skillpack.tui._app import PREVIEW_DELAY, PickerApp  # noqa: E402

Snap = Callable[..., bool]


def picker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PickerApp:
    monkeypatch.delenv("NO_COLOR", raising=False)
    home = fixed_length_dir(tmp_path / "home")
    for variable in ("HOME", "SKILLPACK_HOME"):
        monkeypatch.setenv(variable, str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    project = build_tree(fixed_length_dir(tmp_path / "work"))
    monkeypatch.chdir(project)
    return PickerApp(open_session(project), cwd=str(project), home=str(home))


def settled(keys: Iterable[str] = ()) -> Callable[[Pilot[Any]], Any]:
    """Type `keys`, then wait for the preview and every worker (search, costs, body)."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, PickerApp)
        app.filter_input.cursor_blink = False
        await pilot.press(*keys)
        await pilot.pause(PREVIEW_DELAY + 0.05)
        await workers_done(app)
        await pilot.pause()

    return run_before


def test_main_screen_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = picker(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled())


def test_preview_of_a_skill_with_files_and_a_body(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = picker(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(130, 40), run_before=settled("deploy-app"))


def test_problems_view(snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = picker(tmp_path, monkeypatch)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled(["ctrl+p"]))
