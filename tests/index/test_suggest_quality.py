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


def _load_limits() -> Any:
    path = Path(__file__).resolve().parents[2] / "eval" / "suggest_limits.py"
    spec = importlib.util.spec_from_file_location("suggest_limits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_no_fit_result_dominates_only_when_every_gate_number_is_at_least_as_high() -> None:
    features = _load_limits().Features
    right = features(score=0.5, relevance=1.2, coverage=0.2, held=2, claim=0.6)
    above = features(score=0.6, relevance=1.5, coverage=0.3, held=2, claim=0.6)
    fewer_words = features(score=0.9, relevance=3.0, coverage=0.9, held=1, claim=2.0)
    assert above.dominates(right) and right.dominates(right)
    assert not fewer_words.dominates(right) and not right.dominates(above)
    # Requests count once, however many of their results dominate.
    assert _load_limits().dominated_by(right, [[above, above], [fewer_words], [], [right]]) == 2


@pytest.mark.corpus
def test_the_limits_report_agrees_with_the_eval_on_the_tuning_half() -> None:
    limits, measure = _load_limits(), _load_eval()
    catalog = measure.real_catalog(REAL_SKILLS)
    requests = measure.load_requests()
    report = limits.limits(catalog, requests, REAL_SKILLS)
    tune = measure.measure(catalog, requests, REAL_SKILLS)["halves"]["tune"]
    assert report["visible"] == tune["visible"]
    assert [m["query"] for m in report["misses"]] == tune["missed"]
    assert report["visible"] <= report["ceiling"] <= 1.0
    for miss in report["misses"]:
        near = miss["rank"] is not None and miss["rank"] <= limits.LIMIT
        assert (miss["dominated_by"] is not None) == near
