"""The compatibility cases: edge layouts, what each agent did with them, and the rule
that every difference from skillpack is explained.

One layout holds every edge case (a project with `.git`, a home folder, an
`$OPENCODE_CONFIG_DIR`), so each agent runs once for all of them. `observed.json` records
what the real agents did (`python docs/gen_compat_doc.py --record` rewrites it from a
live run); the suite checks a live run against it when the agents are installed, and
checks skillpack against it everywhere, so a change in skillpack that opens an
unexplained difference fails even where Node is missing. `docs/compat.md` is generated
from the same values.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skillpack._limits import MAX_DEPTH
from skillpack._model import Catalog, Problem
from skillpack.discovery._discover import discover

HERE = Path(__file__).resolve().parent
OBSERVED = HERE / "observed.json"
AGENTS = ("codex", "opencode", "gemini", "copilot")
CWD = "project/pkg"
"""Where the agents and skillpack run, relative to the layout: a folder below the root."""

GOOD = "Edge case. Use in compatibility tests."


def _md(name: str, description: str = GOOD, body: str = "Body\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


@dataclass(frozen=True, kw_only=True)
class Case:
    """One SKILL.md of the edge layout."""

    id: str
    path: str
    """Relative to the layout: `project/...`, `home/...` or `config/...`."""
    content: bytes
    what: str
    """What the case is about, for docs/compat.md."""
    group: str


def _case(group: str, id: str, path: str, content: str | bytes, what: str) -> Case:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return Case(id=id, path=path, content=data, what=what, group=group)


A = "project/.agents/skills/"
TOOLS = ("github", "gemini", "cursor")
"""The repo folders of Copilot, Gemini CLI and Cursor (`.<tool>/skills`)."""
LONG = "a" * 65

CASES: tuple[Case, ...] = (
    # Every root an agent may read, each with one plain skill.
    _case(
        "roots",
        "repo-agents",
        A + "repo-agents/SKILL.md",
        _md("repo-agents"),
        "`.agents/skills` at the project root",
    ),
    _case(
        "roots",
        "cwd-agents",
        "project/pkg/.agents/skills/cwd-agents/SKILL.md",
        _md("cwd-agents"),
        "`.agents/skills` in cwd, below the project root",
    ),
    _case(
        "roots",
        "repo-claude",
        "project/.claude/skills/repo-claude/SKILL.md",
        _md("repo-claude"),
        "`.claude/skills`",
    ),
    _case(
        "roots",
        "repo-opencode",
        "project/.opencode/skills/repo-opencode/SKILL.md",
        _md("repo-opencode"),
        "`.opencode/skills`",
    ),
    _case(
        "roots",
        "repo-opencode-singular",
        "project/.opencode/skill/repo-opencode-singular/SKILL.md",
        _md("repo-opencode-singular"),
        "`.opencode/skill`",
    ),
    _case(
        "roots",
        "cwd-opencode",
        "project/pkg/.opencode/skills/cwd-opencode/SKILL.md",
        _md("cwd-opencode"),
        "`.opencode/skills` in cwd",
    ),
    _case(
        "roots",
        "repo-codex",
        "project/.codex/skills/repo-codex/SKILL.md",
        _md("repo-codex"),
        "`.codex/skills`",
    ),
    *(
        _case(
            "roots",
            f"{where}-{tool}",
            f"{base}.{tool}/skills/{where}-{tool}/SKILL.md",
            _md(f"{where}-{tool}"),
            f"`.{tool}/skills`{' in cwd' if where == 'cwd' else ''}",
        )
        for tool in TOOLS
        for where, base in (("repo", "project/"), ("cwd", "project/pkg/"))
    ),
    _case(
        "roots",
        "cwd-claude",
        "project/pkg/.claude/skills/cwd-claude/SKILL.md",
        _md("cwd-claude"),
        "`.claude/skills` in cwd",
    ),
    _case(
        "roots",
        "repo-bare-skills",
        "project/skills/repo-bare-skills/SKILL.md",
        _md("repo-bare-skills"),
        "`skills/` at the project root (skillpack: only with `repo_skills_dir`)",
    ),
    _case(
        "roots",
        "config-paths",
        "project/pkg/more-skills/config-paths/SKILL.md",
        _md("config-paths"),
        "a folder named by `skills.paths` in `opencode.json`",
    ),
    _case(
        "roots",
        "home-agents",
        "home/.agents/skills/home-agents/SKILL.md",
        _md("home-agents"),
        "`~/.agents/skills`",
    ),
    _case(
        "roots",
        "home-claude",
        "home/.claude/skills/home-claude/SKILL.md",
        _md("home-claude"),
        "`~/.claude/skills`",
    ),
    _case(
        "roots",
        "home-codex",
        "home/.codex/skills/home-codex/SKILL.md",
        _md("home-codex"),
        "`$CODEX_HOME/skills`",
    ),
    _case(
        "roots",
        "home-opencode",
        "home/.config/opencode/skills/home-opencode/SKILL.md",
        _md("home-opencode"),
        "`~/.config/opencode/skills`",
    ),
    _case(
        "roots",
        "home-opencode-singular",
        "home/.config/opencode/skill/home-opencode-singular/SKILL.md",
        _md("home-opencode-singular"),
        "`~/.config/opencode/skill`",
    ),
    _case(
        "roots",
        "home-dot-opencode",
        "home/.opencode/skills/home-dot-opencode/SKILL.md",
        _md("home-dot-opencode"),
        "`~/.opencode/skills`",
    ),
    _case(
        "roots",
        "home-dot-opencode-singular",
        "home/.opencode/skill/home-dot-opencode-singular/SKILL.md",
        _md("home-dot-opencode-singular"),
        "`~/.opencode/skill`",
    ),
    *(
        _case(
            "roots",
            f"home-{tool}",
            f"home/.{tool}/skills/home-{tool}/SKILL.md",
            _md(f"home-{tool}"),
            f"`~/.{tool}/skills`",
        )
        for tool in ("copilot", "gemini", "cursor")
    ),
    _case(
        "roots",
        "env-opencode",
        "config/skills/env-opencode/SKILL.md",
        _md("env-opencode"),
        "`$OPENCODE_CONFIG_DIR/skills`",
    ),
    _case(
        "roots",
        "env-opencode-singular",
        "config/skill/env-opencode-singular/SKILL.md",
        _md("env-opencode-singular"),
        "`$OPENCODE_CONFIG_DIR/skill`",
    ),
    # Encodings.
    _case(
        "encoding",
        "crlf",
        A + "crlf/SKILL.md",
        _md("crlf").replace("\n", "\r\n"),
        "CRLF line endings",
    ),
    _case(
        "encoding",
        "bom",
        A + "bom/SKILL.md",
        "\ufeff" + _md("bom"),
        "a UTF-8 byte-order mark before `---`",
    ),
    _case(
        "encoding",
        "latin1",
        A + "latin1/SKILL.md",
        _md("latin1", "Caf\xe9 edge case.").encode("latin-1"),
        "Latin-1 bytes, not UTF-8",
    ),
    _case(
        "encoding",
        "utf16",
        A + "utf16/SKILL.md",
        _md("utf16").encode("utf-16"),
        "UTF-16 with its BOM",
    ),
    # Names.
    _case("names", "name-long", A + f"{LONG}/SKILL.md", _md(LONG), "a 65-character name"),
    _case(
        "names",
        "name-number",
        A + "name-number/SKILL.md",
        _md("123"),
        "`name: 123` (a YAML number)",
    ),
    _case(
        "names",
        "name-list",
        A + "name-list/SKILL.md",
        _md("[a, b]"),
        "`name: [a, b]` (a YAML list)",
    ),
    *(
        _case(
            "names",
            f"name-{word}",
            A + f"{word}/SKILL.md",
            _md(word),
            f"`name: {word}` (a YAML 1.1 boolean, YAML 1.2 text)",
        )
        for word in ("off", "yes", "no", "on")
    ),
    _case(
        "names",
        "name-missing",
        A + "name-missing/SKILL.md",
        f"---\ndescription: {GOOD}\n---\nx\n",
        "no `name`: the folder name",
    ),
    _case(
        "names",
        "name-mismatch",
        A + "name-mismatch/SKILL.md",
        _md("another-name"),
        "a `name` unlike its folder",
    ),
    _case(
        "names",
        "name-leading-hyphen",
        A + "name-leading-hyphen/SKILL.md",
        _md("-leading-hyphen"),
        "a name starting with `-`",
    ),
    _case(
        "names",
        "name-uppercase",
        A + "name-uppercase/SKILL.md",
        _md("Name_Upper"),
        "a name outside `a-z0-9-`",
    ),
    # Descriptions.
    _case(
        "descriptions",
        "desc-missing",
        A + "desc-missing/SKILL.md",
        "---\nname: desc-missing\n---\nThe first paragraph.\n",
        "no `description`",
    ),
    _case(
        "descriptions",
        "desc-empty",
        A + "desc-empty/SKILL.md",
        _md("desc-empty", '""'),
        '`description: ""`',
    ),
    _case(
        "descriptions",
        "desc-folded",
        A + "desc-folded/SKILL.md",
        "---\nname: desc-folded\ndescription: >\n  Folded   text\n  over lines.\n---\nx\n",
        "a folded block description",
    ),
    _case(
        "descriptions",
        "desc-long",
        A + "desc-long/SKILL.md",
        _md("desc-long", "word " * 220),
        "a 1,100-character description",
    ),
    _case(
        "descriptions",
        "desc-colon",
        A + "desc-colon/SKILL.md",
        _md("desc-colon", "Use when: a colon"),
        "an unquoted `: ` in the description",
    ),
    # Frontmatter.
    _case(
        "frontmatter",
        "no-frontmatter",
        A + "no-frontmatter/SKILL.md",
        "# Only a title\n",
        "no frontmatter",
    ),
    _case(
        "frontmatter",
        "unclosed",
        A + "unclosed/SKILL.md",
        f"---\nname: unclosed\ndescription: {GOOD}\n",
        "frontmatter never closed",
    ),
    _case(
        "frontmatter",
        "yaml-invalid",
        A + "yaml-invalid/SKILL.md",
        "---\nname: yaml-invalid\ndescription: [unclosed\n---\nx\n",
        "YAML that does not parse",
    ),
    # Depth and nesting.
    *(
        _case(
            "nesting",
            f"depth-{depth}",
            A + "/".join(f"d{i}" for i in range(1, depth)) + f"/depth-{depth}/SKILL.md",
            _md(f"depth-{depth}"),
            f"a skill folder {depth} levels below the root",
        )
        for depth in (6, 7, 8)
    ),
    _case("nesting", "outer", A + "outer/SKILL.md", _md("outer"), "a skill holding others"),
    _case(
        "nesting",
        "nested",
        A + "outer/nested/SKILL.md",
        _md("nested"),
        "a skill inside another skill",
    ),
    *(
        _case(
            "nesting",
            f"in-{folder}",
            A + f"outer/{folder}/in-{folder}/SKILL.md",
            _md(f"in-{folder}"),
            f"a skill inside another skill's `{folder}/`",
        )
        for folder in ("scripts", "references", "assets")
    ),
    _case(
        "nesting",
        "node-modules",
        A + "node_modules/pkg/SKILL.md",
        _md("node-modules"),
        "a skill under `node_modules`",
    ),
    _case(
        "nesting",
        "hidden-agents",
        A + ".hidden/SKILL.md",
        _md("hidden-agents"),
        "a hidden folder in `.agents/skills`",
    ),
    _case(
        "nesting",
        "hidden-claude",
        "project/.claude/skills/.hidden/SKILL.md",
        _md("hidden-claude"),
        "a hidden folder in `.claude/skills`",
    ),
    _case(
        "nesting",
        "hidden-opencode",
        "project/.opencode/skills/.hidden/SKILL.md",
        _md("hidden-opencode"),
        "a hidden folder in `.opencode/skills`",
    ),
    # Plugins.
    _case(
        "plugins",
        "plugin-skill",
        A + "plug/skills/plugin-skill/SKILL.md",
        _md("plugin-skill"),
        "a skill of a plugin (`.claude-plugin/plugin.json`)",
    ),
    # Duplicates across roots.
    _case(
        "duplicates",
        "dup-agents",
        A + "dup/SKILL.md",
        _md("dup", "From .agents."),
        "`dup` in `.agents/skills`",
    ),
    _case(
        "duplicates",
        "dup-claude",
        "project/.claude/skills/dup/SKILL.md",
        _md("dup", "From .claude."),
        "`dup` in `.claude/skills`",
    ),
    _case(
        "duplicates",
        "dup-opencode",
        "project/.opencode/skills/dup/SKILL.md",
        _md("dup", "From .opencode."),
        "`dup` in `.opencode/skills`",
    ),
    _case(
        "duplicates",
        "dup-home",
        "home/.agents/skills/dup/SKILL.md",
        _md("dup", "From ~/.agents."),
        "`dup` in `~/.agents/skills`",
    ),
)

OTHER_FILES: Mapping[str, str] = {
    A + "plug/.claude-plugin/plugin.json": '{"name": "plug"}',
    "project/opencode.json": '{"skills": {"paths": ["more-skills"]}}',
}
"""Files of the layout that are not SKILL.md cases."""

SKILLPACK_EXPLAINS = frozenset({"name-shadowed", "name-ambiguous", "walk-truncated"})
"""Codes that explain a difference without naming an agent: skillpack's precedence
(one copy of a name wins) and its depth limit (both reported, both documented)."""


def normalise(text: str) -> str:
    """Whitespace collapsed: how descriptions are compared."""
    return " ".join(text.split())


@dataclass(frozen=True, kw_only=True)
class Layout:
    base: Path
    project: Path
    cwd: Path
    home: Path
    config: Path


def build_edge(base: Path) -> Layout:
    """Write every case and the other files under `base`."""
    for case in CASES:
        target = base / case.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(case.content)
    for rel, text in OTHER_FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text, encoding="utf-8")
    return _layout(base)


def build_corpus(base: Path, corpus: Path) -> Layout:
    """The real-skill corpus copied into `.agents/skills` of a project (both agents read it)."""
    shutil.copytree(corpus, base / A, symlinks=False)
    return _layout(base)


def _layout(base: Path) -> Layout:
    project = base / "project"
    (project / "pkg").mkdir(parents=True, exist_ok=True)
    git = shutil.which("git")
    if git:
        subprocess.run([git, "init", "-q", str(project)], check=True, capture_output=True)
    else:
        (project / ".git").mkdir(exist_ok=True)
    (base / "home").mkdir(exist_ok=True)
    (base / "config").mkdir(exist_ok=True)
    return Layout(
        base=base, project=project, cwd=base / CWD, home=base / "home", config=base / "config"
    )


def layout_env(layout: Layout) -> dict[str, str]:
    """The environment skillpack and the agents share for a layout."""
    home = layout.home
    return {
        "HOME": str(home),
        "SKILLPACK_HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG_DIR": str(layout.config),
        "SKILLPACK_CACHE_DIR": str(layout.base / "skillpack-cache"),
        "SKILLPACK_ADMIN_DIR": str(layout.base / "no-admin"),
    }


@contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for key, value in values.items():
            patch.setenv(key, value)
        yield


def run_skillpack(layout: Layout) -> Catalog:
    """skillpack's catalog for the layout, as a host in its cwd would see it."""
    with _environ(layout_env(layout)):
        return discover(cwd=str(layout.cwd), include_system=False, use_cache=False)


Observation = dict[str, Any]
"""`{"loaded": True, "name": ..., "description": ...}` or `{"loaded": False}` plus the
agent's `"rejected"` message when it gave one."""


def observe(layout: Layout, run: Any, rel_of: Mapping[str, str]) -> dict[str, Observation]:
    """One agent run (`agents.AgentRun`) as observations by case path (`rel_of`: real
    path of each SKILL.md to its path relative to the layout)."""
    seen: dict[str, Observation] = {rel: {"loaded": False} for rel in rel_of.values()}
    for real, loaded in run.loaded.items():
        if real in rel_of:
            seen[rel_of[real]] = {
                "loaded": True,
                "name": loaded.name,
                "description": normalise(loaded.description),
            }
    for real, message in run.rejected.items():
        if real in rel_of:
            seen[rel_of[real]] = {"loaded": False, "rejected": message}
    return seen


def skill_files(layout: Layout) -> dict[str, str]:
    """Every SKILL.md of the layout: real path to path relative to the layout."""
    found: dict[str, str] = {}
    for dirpath, _dirs, files in os.walk(layout.base):
        if "SKILL.md" in files:
            path = Path(dirpath) / "SKILL.md"
            found[os.path.realpath(path)] = path.relative_to(layout.base).as_posix()
    return found


def skillpack_view(layout: Layout, catalog: Catalog) -> dict[str, Observation]:
    """What skillpack loaded, by path relative to the layout (codex-style names for
    plugin skills are compared separately, see `explain`)."""
    view: dict[str, Observation] = {}
    for skill in catalog.skills:
        rel = Path(os.path.realpath(skill.path)).relative_to(layout.base.resolve()).as_posix()
        view[rel] = {
            "loaded": skill.shadowed_by is None,
            "name": skill.name,
            "description": normalise(skill.description),
            "plugin": skill.plugin,
        }
    return view


def problems_about(rel: str, layout: Layout, problems: tuple[Problem, ...]) -> list[Problem]:
    """skillpack's problems about one SKILL.md: on the file, or on a folder above it
    (a skipped folder, a root), a `walk-truncated` only when the file is past the limit."""
    target = (layout.base / rel).resolve()
    about = []
    for problem in problems:
        path = Path(os.path.realpath(problem.path))
        if path == target:
            about.append(problem)
        elif path in target.parents:
            below = len(target.relative_to(path).parts) - 1
            if problem.code != "walk-truncated" or below > MAX_DEPTH:
                about.append(problem)
    return about


def explain(
    rel: str,
    agent: str,
    agent_seen: Observation,
    agent_all: Mapping[str, Observation],
    mine: Observation | None,
    problems: list[Problem],
) -> str | None:
    """How a difference between `agent` and skillpack on one SKILL.md is explained, or
    None when they agree. Raises AssertionError when nothing explains it."""
    loaded = bool(mine and mine["loaded"])
    if agent_seen["loaded"] and loaded and mine is not None:
        name = mine["name"]
        if agent == "codex" and mine.get("plugin"):
            name = f"{mine['plugin']}:{name}"  # Codex names a plugin's skills <plugin>:<name>
        if (agent_seen["name"], agent_seen["description"]) == (name, mine["description"]):
            return None
    elif not agent_seen["loaded"] and not loaded:
        return None
    for problem in problems:
        if agent in problem.agents:
            return f"{problem.code}: {problem.agents[agent]}"
    if not agent_seen["loaded"] and mine is not None:
        # Checked before skillpack's own precedence: which copy OpenCode keeps is not
        # stable between runs (it parses them concurrently, the last one wins).
        twins = [
            other
            for other, seen in agent_all.items()
            if seen["loaded"] and seen["name"] == mine["name"] and other != rel
        ]
        if twins:
            return f"{agent} keeps one copy of the name: {sorted(twins)[0]}"
    for problem in problems:
        if problem.code in SKILLPACK_EXPLAINS or (problem.severity == "error" and not loaded):
            return problem.code
    root = root_of(rel)
    if root is not None and root not in READS[agent]:
        return f"{agent} does not read {root}"
    rule = agent_rule(agent, rel, root, agent_all)
    if rule is not None and not agent_seen["loaded"]:
        return rule
    raise AssertionError(
        f"{rel}: {agent} {json.dumps(agent_seen)} but skillpack {json.dumps(mine)}, "
        f"and no skillpack problem explains it ({[p.code for p in problems]})"
    )


ROOT_CASES: Mapping[str, str] = {
    case.id: case.path.rsplit("/", 2)[0] for case in CASES if case.group == "roots"
}
"""Each root case's root, relative to the layout."""

READS: Mapping[str, frozenset[str]] = {
    "codex": frozenset(
        {
            "project/.agents/skills",
            "project/pkg/.agents/skills",
            "project/.codex/skills",
            "home/.agents/skills",
            "home/.codex/skills",
        }
    ),
    "opencode": frozenset(
        root
        for root in ROOT_CASES.values()
        if root
        not in {
            "project/.codex/skills",
            "project/skills",
            "home/.codex/skills",
            *(f"{base}.{tool}/skills" for base in ("project/", "project/pkg/") for tool in TOOLS),
            *(f"home/.{tool}/skills" for tool in ("copilot", "gemini", "cursor")),
        }
    ),
    # Gemini CLI runs in the project root (its workspace is one folder, see `run_agents`).
    "gemini": frozenset(
        {
            "project/.agents/skills",
            "project/.gemini/skills",
            "home/.agents/skills",
            "home/.gemini/skills",
        }
    ),
    "copilot": frozenset(
        {
            "project/.agents/skills",
            "project/pkg/.agents/skills",
            "project/.claude/skills",
            "project/pkg/.claude/skills",
            "project/.github/skills",
            "project/pkg/.github/skills",
            "home/.agents/skills",
            "home/.copilot/skills",
        }
    ),
}
"""The roots of the layout each agent reads (checked against the root cases)."""


def agent_rule(agent: str, rel: str, root: str | None, files: Collection[str]) -> str | None:
    """An agent's own walk rule that leaves the SKILL.md at `rel` out, or None: Gemini
    CLI reads `<root>/<folder>/SKILL.md` only (its `loadSkillsFromDir` globs
    `*/SKILL.md`); Copilot CLI does not look inside a skill's folder (`files`: every
    SKILL.md of the layout)."""
    if root is None:
        return None
    below = rel[len(root) + 1 :].split("/")[:-1]
    if agent == "gemini" and len(below) > 1:
        return "gemini reads one folder below a root"
    if agent == "copilot":
        for depth in range(1, len(below)):
            folder = "/".join([root, *below[:depth]])
            if f"{folder}/SKILL.md" in files:
                return "copilot does not look inside a skill's folder"
    return None


def root_of(rel: str) -> str | None:
    """The root (as in `ROOT_CASES`) a SKILL.md sits in, the longest that matches."""
    matches = [root for root in ROOT_CASES.values() if rel.startswith(root + "/")]
    return max(matches, key=len) if matches else None


def run_agents(layout: Layout, only: Collection[str] = AGENTS) -> dict[str, dict[str, Observation]]:
    """The real agents (`only` those named) over the layout, once each: observations by
    SKILL.md path.

    The SKILL.md files are listed before the agents run (Codex writes its own skills
    into `$CODEX_HOME/skills/.system`, which are no case).
    """
    import compat_agents as agents

    rel_of = skill_files(layout)
    env = agents.agent_env(layout.home, {"OPENCODE_CONFIG_DIR": str(layout.config)})
    runs = {
        "codex": lambda: agents.run_codex(layout.cwd, env),
        "opencode": lambda: agents.run_opencode(layout.cwd, env),
        # Gemini CLI reads its workspace folder alone: it runs where most cases are.
        "gemini": lambda: agents.run_gemini(layout.project, env),
        "copilot": lambda: agents.run_copilot(layout.cwd, env),
    }
    return {agent: observe(layout, runs[agent](), rel_of) for agent in AGENTS if agent in only}


def corpus_counts(
    seen: Mapping[str, Mapping[str, Observation]], mine: Mapping[str, Observation]
) -> dict[str, int]:
    """How many SKILL.md files the corpus layout has and each of the three loads."""
    files = len(seen["codex"])
    counts = {agent: sum(1 for s in seen[agent].values() if s["loaded"]) for agent in AGENTS}
    return {"files": files, **counts, "skillpack": sum(1 for m in mine.values() if m["loaded"])}


def difference_counts(results: Mapping[str, Mapping[str, str | None]]) -> dict[str, dict[str, int]]:
    """How many SKILL.md files each agent treats differently, by what explains it (a
    problem code, or the agent's own rule for duplicate names and roots)."""
    counts: dict[str, dict[str, int]] = {agent: {} for agent in AGENTS}
    for by_agent in results.values():
        for agent, why in by_agent.items():
            if why is None:
                continue
            kind = why.split(":")[0].replace(f"{agent} ", "")
            counts[agent][kind] = counts[agent].get(kind, 0) + 1
    return counts


def load_observed() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(OBSERVED.read_text(encoding="utf-8"))
    return data


def check_all(
    layout: Layout, catalog: Catalog, seen: Mapping[str, Mapping[str, Observation]]
) -> dict[str, dict[str, str | None]]:
    """`explain` for every SKILL.md and agent: {path: {agent: explanation or None}}."""
    mine = skillpack_view(layout, catalog)
    problems = catalog.problems
    results: dict[str, dict[str, str | None]] = {}
    for rel in sorted(set().union(*(set(s) for s in seen.values()))):
        about = problems_about(rel, layout, problems)
        results[rel] = {
            agent: explain(rel, agent, seen[agent][rel], seen[agent], mine.get(rel), about)
            for agent in AGENTS
        }
    return results
