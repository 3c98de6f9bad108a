"""The package's shape, checked: every module imports alone, the pure core does no I/O.

The layer contracts themselves are import-linter's (`lint-imports`, run by CI); these
tests cover what it cannot see: import cycles that only bite when a module is
imported first, and file-system calls that need no import to make.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

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


HELPER = Path(__file__).with_name("import_alone.py")


def outside_imports(root: Path, package: str) -> list[str]:
    """What the modules under `root` import from outside `package` when they are
    imported (not in functions, not for the type checker): a
    module's name, or `module:name` for `from module import name`."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.update(f"{node.module}:{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, (ast.With, ast.ClassDef)):
                visit(node.body)

    for path in sorted(root.rglob("*.py")):
        visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return sorted(name for name in found if name.partition(".")[0] not in (package, "__future__"))


def import_each_alone(
    modules: list[str], preload: list[str], *, fork: bool = True, path: Path | None = None
) -> dict[str, Any]:
    """Run the helper in a new interpreter (`path` first on its import path)."""
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(path), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(HELPER), "--preload", ",".join(preload)]
        + ([] if fork else ["--no-fork"])
        + modules,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


# Each framework adapter (skillpack.integrations) imports its whole framework: seconds
# apiece on a loaded machine, beyond the default per-test timeout when each module
# starts its own interpreter (the helper's fallback where there is no fork).
@pytest.mark.timeout(360)
def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    modules = all_modules()
    assert len(modules) > 40
    report = import_each_alone(modules, outside_imports(PACKAGE, "skillpack"))
    assert report["failed"] == {}


def write_order_dependent_package(root: Path) -> None:
    """`orderpkg.first` imports fine alone only after `orderpkg.second` (an import
    cycle that bites one way round); `orderpkg.quits` ends the interpreter with status 3;
    `orderpkg.needs_yaml` imports a third party."""
    package = root / "orderpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "first.py").write_text("import orderpkg.second\nA = 1\n", encoding="utf-8")
    (package / "second.py").write_text("from orderpkg.first import A\n", encoding="utf-8")
    (package / "quits.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    (package / "needs_yaml.py").write_text(
        "import yaml\n\nif yaml.safe_load('a: 1') != {'a': 1}:\n    raise ValueError\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("fork", [True, False], ids=["fork", "interpreter"])
def test_the_import_check_catches_a_module_that_needs_another_imported_first(
    tmp_path: Path, fork: bool
) -> None:
    write_order_dependent_package(tmp_path)
    assert outside_imports(tmp_path / "orderpkg", "orderpkg") == ["yaml"]
    # `second` first: in one process `first` would then import; alone it does not.
    modules = ["orderpkg.second", "orderpkg.first", "orderpkg.quits", "orderpkg.needs_yaml"]
    report = import_each_alone(modules, ["yaml"], fork=fork, path=tmp_path)
    assert report["forked"] is fork
    assert list(report["failed"]) == ["orderpkg.first", "orderpkg.quits"]
    assert "cannot import name 'A'" in report["failed"]["orderpkg.first"]
    assert "3" in report["failed"]["orderpkg.quits"]


def test_the_import_check_refuses_preloads_that_import_a_module_under_test(
    tmp_path: Path,
) -> None:
    write_order_dependent_package(tmp_path)
    done = subprocess.run(
        [sys.executable, str(HELPER), "--preload", "orderpkg.second", "orderpkg.first"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 2
    assert "orderpkg.first, orderpkg.second" in done.stderr


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
