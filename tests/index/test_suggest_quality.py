"""The suggestion gate on the real corpus's held-out requests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_SKILLS


def _load_eval() -> Any:
    path = Path(__file__).resolve().parents[2] / "eval" / "suggest_eval.py"
    spec = importlib.util.spec_from_file_location("suggest_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_suggestion_request_is_in_one_half_of_the_split() -> None:
    requests = _load_eval().load_requests()  # raises on an unsplit one
    tune = sum(1 for r in requests if r.half == "tune")
    assert {r.half for r in requests} == {"tune", "held_out"}
    assert abs(tune - (len(requests) - tune)) <= 2
    assert sum(1 for r in requests if not r.expect) >= 100


@pytest.mark.corpus
def test_held_out_requests_get_the_right_suggestion_and_no_fit_ones_stay_quiet() -> None:
    module = _load_eval()
    requests = module.load_requests()
    held_out = module.measure(module.real_catalog(REAL_SKILLS), requests, REAL_SKILLS)
    numbers = held_out["halves"]["held_out"]
    # Measured at the 360 real skills: a right skill suggested for 0.884 of the 112
    # held-out fit requests (visible, with the catalog's descriptions: 0.929), no
    # suggestion for 0.880 of the 50 that need none; pinned a little lower so an
    # honest change has room and a regression does not.
    assert numbers["quiet"] >= 0.85
    assert numbers["suggested"] >= 0.85
    assert numbers["visible"] >= 0.90
    assert numbers["recall@5"] >= 0.90
