"""Run the real Codex, OpenCode, Gemini CLI and Copilot CLI over a folder and read back
what each loaded.

`SKILLPACK_CODEX`, `SKILLPACK_OPENCODE`, `SKILLPACK_GEMINI` and `SKILLPACK_COPILOT` name
the launchers of the pinned npm packages (`@openai/codex@0.171.0`, `opencode-ai@1.18.33`,
`@google/gemini-cli@0.61.0`, `@github/copilot@1.0.102`; `.ci/run` installs them into a
cache folder) and Node 22+ is first on PATH. Each agent runs offline with `HOME`,
`CODEX_HOME` and the `XDG_*` folders pointed at a fresh temporary home: no login, no
model call. One run answers for a whole layout (every skill in it), so a batch costs one
process start per agent.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from conftest import node_major

CODEX = os.environ.get("SKILLPACK_CODEX", "")
OPENCODE = os.environ.get("SKILLPACK_OPENCODE", "")
GEMINI = os.environ.get("SKILLPACK_GEMINI", "")
COPILOT = os.environ.get("SKILLPACK_COPILOT", "")
CODEX_VERSION = "0.171.0"
OPENCODE_VERSION = "1.18.33"
GEMINI_VERSION = "0.61.0"
COPILOT_VERSION = "1.0.102"
VERSIONS = {
    "codex": CODEX_VERSION,
    "opencode": OPENCODE_VERSION,
    "gemini": GEMINI_VERSION,
    "copilot": COPILOT_VERSION,
}
"""The pinned version of each agent the suite runs."""
TIMEOUT = 120


def offline_prefix() -> list[str]:
    """`unshare -rn` where it works: the agent runs with no network at all (only a
    loopback that is down), so "offline" is a fact, not a hope."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-rn", "true"], capture_output=True)
    return [unshare, "-rn"] if probe.returncode == 0 else []


def missing_reason() -> str | None:
    """Why the real agents cannot run here, or None when both can."""
    launchers = (CODEX, OPENCODE, GEMINI, COPILOT)
    if not all(launcher and os.path.exists(launcher) for launcher in launchers):
        return (
            "set SKILLPACK_CODEX, SKILLPACK_OPENCODE, SKILLPACK_GEMINI and SKILLPACK_COPILOT "
            f"to the launchers of @openai/codex@{CODEX_VERSION}, opencode-ai@{OPENCODE_VERSION}, "
            f"@google/gemini-cli@{GEMINI_VERSION} and @github/copilot@{COPILOT_VERSION} "
            "(.ci/run installs them into ~/.cache/skillpack-ci) and put Node 22+ on PATH"
        )
    if node_major() < 22:
        return "the compatibility suite needs Node 22+ first on PATH"
    return None


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """One skill an agent loaded: where from, its name and description as it reads them."""

    path: str
    name: str
    description: str


@dataclass(frozen=True, kw_only=True)
class AgentRun:
    """What one agent run loaded (by SKILL.md real path) and rejected (path: message)."""

    loaded: dict[str, Loaded] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)


def agent_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose every agent folder is under `home` (created here)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(
            ("OPENCODE", "CODEX", "XDG_", "SKILLPACK_", "OPENAI", "GEMINI", "GOOGLE", "COPILOT")
        )
        and key not in ("GH_TOKEN", "GITHUB_TOKEN")
    }
    folders = {
        "HOME": home,
        "CODEX_HOME": home / ".codex",
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
    }
    for name, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["OPENCODE_DISABLE_AUTOUPDATE"] = "1"
    env["OPENCODE_DISABLE_MODELS_FETCH"] = "1"
    env.update(extra or {})
    return env


def _real(path: str) -> str:
    return os.path.realpath(path)


def run_codex(cwd: Path, env: dict[str, str]) -> AgentRun:
    """`codex app-server` over stdio: initialize, initialized, `skills/list` for `cwd`."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "skillpack-compat", "version": "0"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "skills/list",
            "params": {"cwds": [str(cwd)], "forceReload": True},
        },
    ]
    process = subprocess.Popen(
        [*offline_prefix(), CODEX, "app-server", "--listen", "stdio://"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        for line in process.stdout:
            message = json.loads(line)
            if message.get("id") == 2:
                break
        else:
            raise AssertionError("codex app-server closed before answering skills/list")
    finally:
        process.stdin.close()
        process.stdout.close()
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if "error" in message:
        raise AssertionError(f"codex skills/list failed: {message['error']}")
    run = AgentRun()
    for listing in message["result"]["data"]:
        for skill in listing["skills"]:
            if skill["scope"] == "system":
                continue  # the skills Codex bundles and writes into CODEX_HOME
            path = _real(skill["path"])
            run.loaded[path] = Loaded(
                path=path, name=skill["name"], description=skill["description"]
            )
        for error in listing.get("errors") or []:
            run.rejected[_real(error["path"])] = error["message"]
    return run


def run_opencode(cwd: Path, env: dict[str, str]) -> AgentRun:
    """`opencode debug skill --pure` in `cwd`, its output written to a file (through a
    pipe it stops at 128 KiB)."""
    out = Path(env["HOME"]) / "opencode-skills.json"
    with out.open("wb") as sink:
        subprocess.run(
            [*offline_prefix(), OPENCODE, "debug", "skill", "--pure"],
            stdout=sink,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            timeout=TIMEOUT,
            check=True,
        )
    run = AgentRun()
    for skill in json.loads(out.read_text(encoding="utf-8")):
        if skill["location"] == "<built-in>":
            continue
        path = _real(skill["location"])
        run.loaded[path] = Loaded(
            path=path, name=skill["name"], description=skill.get("description") or ""
        )
    return run


def trust_for_gemini(home: Path, workspace: Path) -> None:
    """Gemini CLI reads workspace skills only in a trusted folder: trust `workspace`
    under `home` (folder trust on, the folder marked `TRUST_FOLDER`)."""
    gemini = home / ".gemini"
    gemini.mkdir(parents=True, exist_ok=True)
    (gemini / "trustedFolders.json").write_text(
        json.dumps({str(workspace): "TRUST_FOLDER"}), encoding="utf-8"
    )
    (gemini / "settings.json").write_text(
        json.dumps({"security": {"folderTrust": {"enabled": True}}}), encoding="utf-8"
    )


def parse_gemini(text: str) -> AgentRun:
    """`gemini skills list --all` output: a block per skill, `<name> [Enabled]` (then
    `[Built-in]` for its own), `Description:` and `Location:` (the SKILL.md) lines."""
    run = AgentRun()
    name: str | None = None
    builtin = False
    description: list[str] = []
    field_now = ""
    for line in text.splitlines():
        head = re.match(r"^(\S.*?) \[(?:Enabled|Disabled)\]( \[Built-in\])?\s*$", line)
        if head:
            name, builtin, description, field_now = head.group(1), bool(head.group(2)), [], ""
            continue
        if name is None:
            continue
        stripped = line.strip()
        if stripped.startswith("Description:"):
            field_now = "description"
            description.append(stripped.removeprefix("Description:").strip())
        elif stripped.startswith("Location:"):
            field_now = ""
            path = _real(stripped.removeprefix("Location:").strip())
            if not builtin:
                run.loaded[path] = Loaded(path=path, name=name, description=" ".join(description))
            name = None
        elif field_now == "description" and stripped:
            description.append(stripped)
    return run


def run_gemini(workspace: Path, env: dict[str, str]) -> AgentRun:
    """`gemini skills list --all` in `workspace` (Gemini CLI reads the workspace folder
    alone, not the folders above it), the workspace trusted first."""
    trust_for_gemini(Path(env["HOME"]), workspace)
    done = subprocess.run(
        [*offline_prefix(), GEMINI, "skills", "list", "--all"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        cwd=workspace,
        env=env,
        timeout=TIMEOUT,
        check=True,
    )
    return parse_gemini(done.stdout.decode("utf-8", "replace"))


def run_copilot(cwd: Path, env: dict[str, str]) -> AgentRun:
    """`copilot skill list --json` in `cwd` (no login needed): each skill's folder."""
    done = subprocess.run(
        [*offline_prefix(), COPILOT, "skill", "list", "--json"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT,
        check=True,
    )
    run = AgentRun()
    for skill in json.loads(done.stdout.decode("utf-8")):
        if skill.get("source") == "builtin":
            continue
        path = _real(os.path.join(skill["path"], "SKILL.md"))
        run.loaded[path] = Loaded(
            path=path, name=skill["name"], description=skill.get("description") or ""
        )
    return run
