"""Check the built sdist and wheel in DIST_DIR: the license ships, the version is the one.

Usage: python .ci/check_dist.py DIST_DIR (run by .ci/run after `python -m build`).
Exits 1 with one line per failure.
"""

from __future__ import annotations

import re
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _declared_version() -> str:
    text = (ROOT / "src" / "skillpack" / "_version.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if found is None:
        raise SystemExit('src/skillpack/_version.py: no `__version__ = "..."` line')
    return found.group(1)


def check(dist: Path) -> list[str]:
    """Return what is wrong with the one wheel and the one sdist in `dist` (empty: all good)."""
    license_text = (ROOT / "LICENSE").read_bytes()
    version = _declared_version()
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"{dist}: expected one wheel and one sdist, found {len(wheels)} and {len(sdists)}"]
    failures: list[str] = []
    with zipfile.ZipFile(wheels[0]) as wheel:
        info = f"skillpack-{version}.dist-info"
        names = set(wheel.namelist())
        if f"{info}/licenses/LICENSE" not in names:
            failures.append(f"{wheels[0].name}: no {info}/licenses/LICENSE")
        elif wheel.read(f"{info}/licenses/LICENSE") != license_text:
            failures.append(f"{wheels[0].name}: its LICENSE differs from ./LICENSE")
        if f"{info}/METADATA" in names:
            metadata = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode("utf-8"))
            if metadata["License-Expression"] != "Apache-2.0":
                failures.append(f"{wheels[0].name}: License-Expression is not Apache-2.0")
        else:
            failures.append(f"{wheels[0].name}: no {info}/METADATA (is {version} its version?)")
    with tarfile.open(sdists[0]) as sdist:
        member = f"skillpack-{version}/LICENSE"
        if member not in sdist.getnames():
            failures.append(f"{sdists[0].name}: no {member}")
    return failures


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    problems = check(Path(sys.argv[1]))
    for problem in problems:
        print(f"check_dist: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)
