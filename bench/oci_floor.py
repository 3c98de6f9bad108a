"""The floor for `bench_oci.py`: plain httpx downloads of what an OCI install fetches.

    python bench/oci_floor.py HOST REPO TAG OUT_DIR

GETs the collection index at `REPO:TAG`, then every manifest it lists and every
layer blob those name, with one httpx client over http, and writes each body to a
file in OUT_DIR. No digest checks, no unpacking, no validation: the least work any
client pulling the same skills must do. Prints the number of files written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx

ACCEPT = "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json"


def main() -> int:
    host, repo, tag, out = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    out.mkdir(parents=True, exist_ok=True)
    base = f"http://{host}/v2/{repo}"
    count = 0
    with httpx.Client(timeout=30.0, headers={"Accept": ACCEPT}) as client:
        index = client.get(f"{base}/manifests/{tag}")
        index.raise_for_status()
        (out / "index.json").write_bytes(index.content)
        count += 1
        for entry in json.loads(index.content)["manifests"]:
            manifest = client.get(f"{base}/manifests/{entry['digest']}")
            manifest.raise_for_status()
            name = entry["digest"].split(":")[1]
            (out / f"{name}.json").write_bytes(manifest.content)
            for layer in json.loads(manifest.content)["layers"]:
                blob = client.get(f"{base}/blobs/{layer['digest']}")
                blob.raise_for_status()
                (out / f"{layer['digest'].split(':')[1]}.tar.gz").write_bytes(blob.content)
                count += 2
    print(count)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
