"""The package's shape, checked: every module imports alone, the pure core does no I/O.

The layer contracts themselves are import-linter's (`lint-imports`, run by CI); these
tests cover what it cannot see: import cycles that only bite when a module is
imported first, and file-system calls that need no import to make.
"""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import skillpack

PACKAGE = Path(skillpack.__file__).parent
PURE_PACKAGES = ("parse", "select", "render")


def all_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages([str(PACKAGE)], prefix="skillpack.")
        if ".skills." not in info.name
    )


# Each framework adapter (skillpack.integrations) imports its whole framework: seconds
# apiece on a loaded machine, beyond the default per-test timeout.
@pytest.mark.timeout(360)
def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    def import_alone(module: str) -> tuple[str, int, str]:
        done = subprocess.run(
            [sys.executable, "-c", f"import {module}"], capture_output=True, text=True
        )
        return module, done.returncode, done.stderr if done.stderr.strip() else ""

    modules = all_modules()
    assert len(modules) > 40
    with ThreadPoolExecutor(max_workers=4) as pool:
        failed = [(m, err) for m, code, err in pool.map(import_alone, modules) if code != 0]
    assert failed == []


FS_CALLS = {
    "open",
    "os.open",
    "os.stat",
    "os.lstat",
    "os.scandir",
    "os.listdir",
    "os.walk",
    "os.readlink",
    "os.remove",
    "os.unlink",
    "os.rename",
    "os.replace",
    "os.mkdir",
    "os.makedirs",
    "os.getcwd",
    "os.path.exists",
    "os.path.lexists",
    "os.path.isdir",
    "os.path.isfile",
    "os.path.islink",
    "os.path.realpath",
    "os.path.getsize",
    "os.path.getmtime",
    "os.path.samefile",
    "os.path.abspath",
    "os.path.expanduser",
}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_the_pure_packages_call_nothing_that_touches_the_file_system(package: str) -> None:
    found = []
    for path in sorted((PACKAGE / package).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _dotted(node.func) in FS_CALLS:
                found.append(f"{path.name}:{node.lineno} {_dotted(node.func)}")
    assert found == []


PURE_RUN = textwrap.dedent(
    """
    import sys
    from skillpack._model import Catalog
    from skillpack.parse._frontmatter import parse_skill
    from skillpack.render._catalog import render_catalog
    from skillpack.render._injection import render_injection
    from skillpack.render._substitute import substitute
    from skillpack.select._resolve import resolve_message
    import yaml  # imported before the hook: importing reads files

    texts = {
        f"/s/{name}/SKILL.md": f"---\\nname: {name}\\ndescription: Does {name}. "
        f"Use when testing.\\nmetadata: {{n: 1}}\\n---\\nRun $ARGUMENTS[0] in ${{SKILL_DIR}}.\\n"
        for name in ("alpha", "beta", "gamma")
    }
    texts["/s/bad/SKILL.md"] = "---\\nname: [bad\\n---\\n"
    events = []

    def hook(event, args):
        if event.split(".")[0] in {"open", "os", "shutil", "subprocess", "sqlite3", "socket"}:
            events.append(event)

    sys.addaudithook(hook)
    parsed = [parse_skill(t, path=p, strict=s) for p, t in texts.items() for s in (False, True)]
    skills = tuple(x.skill for x in parsed if x.skill is not None)
    catalog = Catalog(skills=skills)
    resolve_message("$alpha and [$beta](/s/beta/SKILL.md) then", catalog)
    resolve_message("/gamma x y", catalog)
    for fmt in ("xml", "markdown", "json"):
        render_catalog(skills, format=fmt, budget_chars=200)
    render_injection(skills[0], "Run $ARGUMENTS", args="a b", files=("x.md",))
    substitute("$1 ${SKILL_DIR} $ARGUMENTS", skill=skills[0], args="x 'y z'")
    print(",".join(sorted(set(events))))
    """
)


def test_the_pure_core_opens_no_file_while_parsing_selecting_and_rendering() -> None:
    done = subprocess.run([sys.executable, "-c", PURE_RUN], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
