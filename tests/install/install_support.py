"""Helpers for the install tests: a real HTTP server subprocess, skill folders, git repos."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SERVER = Path(__file__).with_name("site_server.py")


@dataclass(frozen=True)
class Server:
    url: str
    log: Path
    root: Path

    def requests(self) -> list[str]:
        """`<status> <path>` for every request so far."""
        if not self.log.exists():
            return []
        return self.log.read_text(encoding="utf-8").splitlines()


@contextlib.contextmanager
def serve(root: Path) -> Iterator[Server]:
    """Serve `root` from a `site_server.py` subprocess on 127.0.0.1."""
    log = root.parent / f"{root.name}.requests.log"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(root), str(log)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield Server(url=f"http://127.0.0.1:{port}", log=log, root=root)
    finally:
        process.kill()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def skill_md(
    name: str, description: str = "A test skill. Use when testing.", body: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n{body or 'Do it.'}\n"


def write_skill(base: Path, name: str, files: dict[str, str] | None = None, **kwargs: str) -> Path:
    """`<base>/<name>/SKILL.md` plus `files`; returns the folder."""
    folder = base / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill_md(name, **kwargs), encoding="utf-8")
    for rel, text in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def make_repo(path: Path) -> Path:
    """An empty git repository at `path` (work tree)."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", cwd=path)
    return path


def commit_all(repo: Path, message: str = "change") -> str:
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo)


def tree_files(folder: Path) -> dict[str, bytes]:
    """Every regular file under `folder` (relative POSIX path -> bytes)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def skillpack_env(home: Path) -> dict[str, str]:
    """The environment for a `skillpack` subprocess confined to `home`."""
    env = dict(os.environ)
    env.update(
        {
            "SKILLPACK_HOME": str(home),
            "HOME": str(home),
            "SKILLPACK_CACHE_DIR": str(home / "cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
        }
    )
    return env
