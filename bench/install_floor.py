"""The floor for `bench_install.py`: plain httpx downloads of what an install fetches.

    python bench/install_floor.py SITE_URL OUT_DIR

GETs the site's index, then every artifact it lists, with one httpx client, and
writes each body to a file in OUT_DIR. No verification, no unpacking, no
validation: the least work any installer of the same site must do. Prints the
number of files written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urljoin

import httpx


def main() -> int:
    site, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    index_url = site.rstrip("/") + "/.well-known/agent-skills/index.json"
    count = 0
    with httpx.Client(timeout=30.0) as client:
        response = client.get(index_url)
        response.raise_for_status()
        (out / "index.json").write_bytes(response.content)
        for entry in json.loads(response.content)["skills"]:
            artifact = client.get(urljoin(index_url, entry["url"]))
            artifact.raise_for_status()
            (out / f"{entry['name']}-{Path(entry['url']).name}").write_bytes(artifact.content)
            count += 1
    print(count)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
