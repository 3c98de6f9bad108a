"""Surface: the `skillpack` command line, a thin adapter over the library API (click + rich).
Imports runtime and below; commands translate options into core calls, nothing more.
"""

from __future__ import annotations


def main() -> None:
    """Console-script entry point."""
    import gc
    import os
    import sys

    # A CLI run is short and allocates many long-lived objects (one per skill): the
    # cyclic collector would only rescan them. Teardown is skipped for the same
    # reason once every stream is flushed; the index file is committed by then.
    gc.disable()
    from ._app import cli

    code: int | str | None
    try:
        cli(prog_name="skillpack")
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = code or 1
    os._exit(code or 0)
