"""`python -m skillpack`: the command line, for a config that names an interpreter (an
MCP client's stdio entry, a venv that is not activated) rather than a script on PATH."""

from __future__ import annotations

if __name__ == "__main__":
    from skillpack.cli import main

    main()
