"""Import each named module alone, as a fresh interpreter would, and report the failures.

    python tests/import_alone.py [--preload a,b.c] [--no-fork] MODULE...

Prints one JSON object: `{"failed": {module: traceback}, "forked": bool}`. Exit 0 when it
ran (whatever failed), 2 when a preload brought in a module that is being checked.

Starting an interpreter per module spends most of its time importing the same
standard-library and third-party modules again. So this process (started fresh by the
test) first imports the `--preload` modules (`module:name` does what `from module import
name` does), none of them under the package being checked, then forks one child per
module: the child imports its module and reports, and no child sees what another
imported. Where `os.fork` is missing, or with `--no-fork`, each module gets its own
interpreter. A preload that fails to import is left out: the module that needs it then
fails in its child, as it would alone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import traceback


def preload(name: str) -> None:
    """Import `module`, or for `module:name` do what `from module import name` does
    (a package's lazy attribute, or its submodule). A failure is left to the child."""
    module, _, attribute = name.partition(":")
    try:
        imported = importlib.import_module(module)
        if attribute and attribute != "*" and not hasattr(imported, attribute):
            importlib.import_module(f"{module}.{attribute}")
    except Exception:  # noqa: BLE001, S110 - whoever needs it fails in its child
        pass


def in_child(module: str) -> str | None:
    """Fork, import `module` in the child; its traceback, or None when it imported."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: import, write the traceback if any, leave at once
        os.close(read)
        code = 0
        try:
            importlib.import_module(module)
        except SystemExit as exit_:  # as the interpreter ends on it
            code = exit_.code if isinstance(exit_.code, int) else 1
            if code:
                os.write(write, f"the import exited with {exit_.code!r}".encode())
        except BaseException:  # noqa: BLE001 - every failure is the report
            os.write(write, traceback.format_exc().encode("utf-8", "replace"))
            code = 1
        os._exit(code)
    os.close(write)
    chunks = []
    with os.fdopen(read, "rb") as pipe:
        while chunk := pipe.read(65536):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) == 0:
        return None
    return text or f"the child ended with status {os.waitstatus_to_exitcode(status)}"


def in_interpreter(module: str) -> str | None:
    """Import `module` in a new interpreter; its stderr, or None when it imported."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    if done.returncode == 0:
        return None
    return done.stderr or f"the interpreter ended with status {done.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="+")
    parser.add_argument(
        "--preload", default="", help="Comma-separated `module` or `module:name` to import first."
    )
    parser.add_argument("--no-fork", action="store_true", help="An interpreter per module.")
    options = parser.parse_args(argv)
    forked = hasattr(os, "fork") and not options.no_fork
    if forked:
        for name in filter(None, options.preload.split(",")):
            preload(name)
        tops = {m.partition(".")[0] for m in options.modules}
        early = sorted(m for m in sys.modules if m.partition(".")[0] in tops)
        if early:
            print(f"the preloads imported modules under test: {', '.join(early)}", file=sys.stderr)
            return 2
    check = in_child if forked else in_interpreter
    failed = {}
    for module in options.modules:
        problem = check(module)
        if problem is not None:
            failed[module] = problem
    print(json.dumps({"failed": failed, "forked": forked}))
    return 0


if __name__ == "__main__":
    if os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # the tests folder is no part of what a module may import
    sys.exit(main())
