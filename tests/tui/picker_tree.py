"""A small, fixed workspace for the picker's tests and snapshots.

Every kind of row the picker draws is here: plain skills, a shadowed one, a
user-only and a model-only one, a disabled and a denied one, one with warnings, a
broken SKILL.md (a problem with no skill), and a skill with bundled files. The
paths the picker shows are relative to the project or start with `~`, so
snapshots do not depend on the temp folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillpack.runtime._session import Session

DEPLOY_BODY = """\
# Deploy the app

Ship the current branch to **staging**, then to production.

1. Run the checks.
2. Build the image.

```sh
make deploy ENV=staging
```

| step | time |
|------|------|
| build | 2 min |
"""


def _skill(folder: Path, frontmatter: str, body: str = "Do the thing.\n") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\n{frontmatter.strip()}\n---\n{body}", "utf-8")


def build_tree(base: Path) -> Path:
    """Write the workspace under `base` (and the user's home); return the project."""
    project = base / "proj"
    (project / ".git").mkdir(parents=True)
    skills = project / ".agents" / "skills"
    _skill(
        skills / "deploy-app",
        "name: deploy-app\n"
        "description: Deploy the service to staging or production. Use when the user "
        "asks to ship, release or roll out the app.\n"
        "license: MIT\n"
        "allowed-tools: Bash(make:*) Read\n"
        "metadata:\n  owner: platform-team\n  version: '2.1'",
        DEPLOY_BODY,
    )
    (skills / "deploy-app" / "scripts").mkdir()
    (skills / "deploy-app" / "scripts" / "deploy.sh").write_text("make deploy\n", "utf-8")
    (skills / "deploy-app" / "references").mkdir()
    (skills / "deploy-app" / "references" / "checklist.md").write_text("# Checks\n", "utf-8")
    _skill(
        skills / "code-review",
        "name: code-review\ndescription: Review a pull request for bugs, style and tests.",
    )
    _skill(
        skills / "pdf-tools",
        "name: pdf-tools\ndescription: Fill, merge and split PDF forms.",
    )
    _skill(
        skills / "release-notes",
        "name: release-notes\ndescription: Write the release notes from the changelog.\n"
        "disable-model-invocation: true",
        "Collect the merged pull requests since the last tag.\n",
    )
    _skill(
        skills / "style-guide",
        "name: style-guide\ndescription: House style for prose and code comments.\n"
        "user-invocable: false",
    )
    _skill(skills / "old-helper", "name: old-helper\ndescription: A retired helper script.")
    _skill(skills / "secret-ops", "name: secret-ops\ndescription: Rotate production secrets.")
    _skill(
        skills / "data-viz",
        "name: charts\ndescription: Draw charts from CSV data with matplotlib.",
    )
    _skill(skills / "broken", "name: broken\ndescription: [unclosed")
    home_skills = Path.home() / ".agents" / "skills"
    _skill(
        home_skills / "pdf-tools",
        "name: pdf-tools\ndescription: The user's own copy of the PDF tools.",
    )
    _skill(
        home_skills / "journal",
        "name: journal\ndescription: Keep a daily work journal in markdown files.",
    )
    config = Path.home() / ".config" / "skillpack" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[skills]\ndisabled = ["old-helper"]\n\n[permissions]\ndeny = ["secret-ops"]\n',
        "utf-8",
    )
    return project


FIXED_LENGTH = 160


def fixed_length_dir(base: Path, length: int = FIXED_LENGTH) -> Path:
    """A folder under `base` whose absolute path is exactly `length` characters.

    The catalog the model gets lists SKILL.md paths, so its size (shown as each
    skill's catalog cost) depends on the length of the temp folder's path; a
    snapshot built under this folder does not.
    """
    room = length - len(str(base)) - 1
    if room < 1:
        raise ValueError(f"{base} is longer than {length - 2} characters")
    folder = base / ("p" * room)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_session(project: Path, **kwargs: Any) -> Session:
    """The session `skillpack ui` opens, without the bundled skills (they change)."""
    kwargs.setdefault("refresh", "manual")  # as `skillpack ui` opens it
    return Session.open(cwd=str(project), include_system=False, **kwargs)


async def workers_done(app: Any) -> None:
    """Wait until the app's workers are done. An exclusive worker that a newer one of
    its group replaced (a catalog change while the first preparation ran) ends
    cancelled; the wait then goes on for the newer one."""
    from textual.worker import WorkerCancelled

    while True:
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        return
