"""skillpack against the real Codex, OpenCode, Gemini CLI and Copilot CLI: every SKILL.md
loaded alike, or explained.

Without the agents (`agents.missing_reason`), skillpack is still checked against what
they did when `observed.json` was recorded; with them, a live run must match that record
(an agent upgrade that changes behaviour fails here: re-record with
`python docs/gen_compat_doc.py --record` and read the diff) and the corpus is run live.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import compat_agents as agents
import compat_cases as cases
import pytest

from conftest import REAL_SKILLS

REASON = agents.missing_reason()
needs_agents = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> tuple[cases.Layout, Any]:
    layout = cases.build_edge(tmp_path_factory.mktemp("edge"))
    return layout, cases.run_skillpack(layout)


def test_the_record_covers_every_case_and_no_other() -> None:
    observed = cases.load_observed()
    paths = {case.path for case in cases.CASES}
    for agent in cases.AGENTS:
        assert set(observed["edge"][agent]) == paths, f"re-record {agent}: cases changed"
    assert observed["versions"] == agents.VERSIONS


def test_skillpack_explains_every_recorded_difference(edge: tuple[cases.Layout, Any]) -> None:
    layout, catalog = edge
    results = cases.check_all(layout, catalog, cases.load_observed()["edge"])

    assert set(results) == {case.path for case in cases.CASES}
    # The differences skillpack explains with an agent note, as the issue lists them.
    by_id = {case.id: results[case.path] for case in cases.CASES}
    assert by_id["bom"]["codex"] == "byte-order-mark: rejects: byte-order mark before ---"
    assert by_id["name-long"]["codex"] == "name-too-long: rejects: name over 64 characters"
    assert (by_id["desc-missing"]["codex"] or "").startswith("description-from-body")
    assert (by_id["name-number"]["opencode"] or "").startswith("value-coerced")
    assert (by_id["node-modules"]["codex"] or "").startswith("folder-skipped")
    assert (by_id["hidden-agents"]["opencode"] or "").startswith("folder-skipped")
    for id in ("in-scripts", "in-references", "in-assets"):
        for agent in ("codex", "opencode"):
            assert (by_id[id][agent] or "").startswith("folder-skipped"), (id, agent)
        assert (by_id[id]["gemini"], by_id[id]["copilot"]) == (None, None), id
    assert by_id["bom"]["gemini"] == "byte-order-mark: drops: byte-order mark before ---"
    assert by_id["name-long"]["copilot"] == "name-too-long: drops: name over 64 characters"
    assert (by_id["node-modules"]["copilot"] or "").startswith("folder-skipped")
    assert (by_id["yaml-invalid"]["gemini"] or "").startswith("yaml-invalid: loads it")
    assert (
        by_id["depth-8"]["copilot"]
        == "walk-truncated: loads skills at any depth (in the roots it reads)"
    )
    assert by_id["nested"]["gemini"] == "gemini reads one folder below a root"
    assert by_id["nested"]["copilot"] == "copilot does not look inside a skill's folder"
    for id in ("name-off", "name-yes", "name-no", "name-on"):
        assert set(by_id[id].values()) == {None}, id
    for id in ("nested", "plugin-skill"):
        assert (by_id[id]["codex"], by_id[id]["opencode"]) == (None, None), id


def listed_by_skillpack_or_named(
    agent: str, layout: cases.Layout, catalog: Any, seen: dict[str, Any]
) -> list[str]:
    """The SKILL.md files `agent` lists that skillpack neither lists nor names the agent
    in a problem about (the issue's acceptance rule)."""
    mine = cases.skillpack_view(layout, catalog)
    missing = []
    for rel, observed in seen[agent].items():
        if not observed["loaded"] or rel in mine:
            continue
        about = cases.problems_about(rel, layout, catalog.problems)
        if not any(agent in problem.agents for problem in about):
            missing.append(rel)
    return missing


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_every_skill_the_recorded_agent_lists_is_listed_by_skillpack_or_named(
    agent: str, edge: tuple[cases.Layout, Any]
) -> None:
    layout, catalog = edge
    seen = cases.load_observed()["edge"]
    assert sum(s["loaded"] for s in seen[agent].values()) >= 10, "the agent listed the roots"
    assert listed_by_skillpack_or_named(agent, layout, catalog, seen) == []


@needs_agents
@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_every_skill_the_live_agent_lists_is_listed_by_skillpack_or_named(
    agent: str, tmp_path: Path
) -> None:
    layout = cases.build_edge(tmp_path)
    catalog = cases.run_skillpack(layout)
    live = cases.run_agents(layout, only=(agent,))

    assert listed_by_skillpack_or_named(agent, layout, catalog, live) == []


def test_the_roots_each_agent_reads_are_the_documented_ones() -> None:
    edge = cases.load_observed()["edge"]
    for case in cases.CASES:
        if case.group != "roots":
            continue
        root = cases.ROOT_CASES[case.id]
        for agent in cases.AGENTS:
            assert edge[agent][case.path]["loaded"] is (root in cases.READS[agent]), (
                agent,
                case.id,
            )


def test_skillpack_loads_every_root_either_agent_reads(edge: tuple[cases.Layout, Any]) -> None:
    layout, catalog = edge
    mine = cases.skillpack_view(layout, catalog)
    for case in cases.CASES:
        if case.group == "roots" and any(
            cases.ROOT_CASES[case.id] in cases.READS[agent] for agent in cases.AGENTS
        ):
            assert (mine.get(case.path) or {}).get("loaded"), case.id


@needs_agents
def test_the_live_agents_do_what_was_recorded(tmp_path: Path) -> None:
    layout = cases.build_edge(tmp_path)
    catalog = cases.run_skillpack(layout)
    live = cases.run_agents(layout)

    recorded = cases.load_observed()["edge"]
    duplicates = {case.path for case in cases.CASES if case.group == "duplicates"}
    for agent in cases.AGENTS:
        # Which copy of a name OpenCode keeps varies between runs: only how many is fixed.
        assert {p: s for p, s in live[agent].items() if p not in duplicates} == {
            p: s for p, s in recorded[agent].items() if p not in duplicates
        }
        kept = [live[agent][p]["loaded"] for p in sorted(duplicates)]
        assert sum(kept) == sum(recorded[agent][p]["loaded"] for p in duplicates)
    cases.check_all(layout, catalog, live)


@needs_agents
@pytest.mark.corpus
def test_on_the_corpus_every_skill_loads_alike_or_is_explained(tmp_path: Path) -> None:
    layout = cases.build_corpus(tmp_path, REAL_SKILLS)
    catalog = cases.run_skillpack(layout)
    live = cases.run_agents(layout)

    results = cases.check_all(layout, catalog, live)

    mine = cases.skillpack_view(layout, catalog)
    observed = cases.load_observed()
    assert cases.corpus_counts(live, mine) == observed["corpus"]
    # How many differences there are varies: when OpenCode keeps the hidden copy of a
    # duplicated name, both copies differ; when it keeps the other, neither does. What
    # explains them does not.
    found = cases.difference_counts(results)
    for agent in cases.AGENTS:
        assert set(found[agent]) <= set(observed["corpus_differences"][agent]), agent
    assert len(results) == len(list(REAL_SKILLS.rglob("SKILL.md")))


def test_docs_compat_md_is_current() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "gen_compat_doc.py"
    spec = importlib.util.spec_from_file_location("gen_compat_doc", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = module.COMPAT_MD.read_text(encoding="utf-8")
    assert current == module.render(cases.load_observed()), (
        "docs/compat.md is stale: run python docs/gen_compat_doc.py"
    )
