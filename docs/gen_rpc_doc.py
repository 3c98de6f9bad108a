"""Regenerate docs/rpc.md from the server's one schema (tests check it is current).

python docs/gen_rpc_doc.py          # rewrite docs/rpc.md
python docs/gen_rpc_doc.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from skillpack.rpc._codes import ERROR_CODES, PROTOCOL_CODES, RPC_CODES
from skillpack.rpc._frame import MAX_BATCH, MAX_MESSAGE_BYTES, MAX_RESPONSE_BYTES
from skillpack.rpc._schema import DEFS, METHODS, NOTIFICATIONS

RPC_MD = Path(__file__).resolve().parent / "rpc.md"

HEADER = f"""# skillpack app server (JSON-RPC 2.0)

Generated from `src/skillpack/rpc/_schema.py` by `python docs/gen_rpc_doc.py`; do not
edit by hand. The server sends the same schema as the result of `rpc.discover`.

`skillpack serve` gives editors and agent UIs the catalog as data: the skills of each
workspace, what is broken and why, what the prompt costs, and a notification when
something changes on disk.

## Transports

- **stdio** (`skillpack serve`, `--transport stdio` being the default): one JSON
  message per line on stdin; replies and notifications one per line on stdout.
  Requests run concurrently, so replies may come out of order: match them by `id`.
  The server ends when stdin does.
- **HTTP** (`skillpack serve --transport http [--host 127.0.0.1] [--port 8765]`, the
  flags of `skillpack mcp`): `POST /rpc` with `Content-Type: application/json` and
  `Authorization: Bearer <token>`. The token is read from `--token-file PATH`, or is
  a random secret written at start to a file only its owner can read (mode 0600, in a
  private folder under the user config folder, or `--token-file-out PATH`); the address
  and that file's path are printed at start (one JSON line on stdout with `--json`). A
  file the server wrote is removed when it stops. Notifications arrive as server-sent events on
  `GET /events` (same token): `event: skills/changed` with the JSON-RPC notification as
  `data`, an `event: ready` first and a `: ping` comment every 15 seconds.
  Requests whose `Host` is not this server are refused (421) against DNS rebinding, and
  browser requests from an `Origin` other than this server or one given with
  `--allow-origin` (which also enables CORS for it) get 403. A missing or wrong token is
  401. Each refusal closes the connection; a connection takes one of the 128 slots only
  once a request on it passed these checks (`skillpack mcp --transport http` answers
  the same way).
  The server binds 127.0.0.1 unless told otherwise.

Python hosts can use the typed client `skillpack.rpc.Client` (`Client.stdio(...)`,
`Client.http(url, token_file=...)`, `Client.spawn_http(...)`), which has a method per
RPC method and `notifications()` / `on_notification(callback)`.

## Limits and bad input

- A message over {MAX_MESSAGE_BYTES:,} bytes (4 MiB) is refused without being read whole:
  over HTTP from its `Content-Length` (413), over stdio by reading the line in bounded
  chunks and dropping it (error `-32012`).
- A batch holds 1 to {MAX_BATCH} requests. A result over {MAX_RESPONSE_BYTES:,} bytes is
  replaced by error `-32013`.
- Malformed JSON is `-32700`, a malformed request `-32600`, an unknown method `-32601`,
  bad params `-32602` with the field named in the message and in `error.data.field`.
  Params are closed: an unknown key is an error. Results are open: fields may be added,
  never renamed or removed.
- Nothing a client sends stops the server; a client that disconnects mid-request does not
  disturb the others.
- Sessions are capped (`--max-sessions`, 256); one unused for `--session-idle` seconds
  may be closed when a new one opens. A full table never locks a new client out:
  `session.open` takes the place of the session used least recently that has no request
  in flight, and the server logs that once per episode; only while every session has a
  request in flight is it refused with `-32011`. A request naming a closed session gets
  `-32010`: end sessions with `session.close` when done. `skillpack mcp --transport
  http` keeps the same rule.

## Tool-like methods

`skills.search`, `skills.load` and `skills.read_file` answer the tools' envelope as
their result: `{{"ok": true, "data": ...}}` or `{{"ok": false, "error": {{"code", "message",
"candidates"?}}}}` with the errors' own codes (`SkillpackError.code`: `INVALID_PARAM`,
`NOT_FOUND`, `AMBIGUOUS`, `DISABLED`, `PERMISSION_DENIED`, `INVALID_SKILL`, `IO_ERROR`,
`EXECUTION_ERROR`, `INTERNAL_ERROR`; see docs/design.md, "Errors"). Without a
`session` they run in the workspace of `cwd`; a load then never answers a reminder.
"""


def _type(schema: dict[str, Any]) -> str:
    """A short reading of a schema: `string`, `list of Skill`, `'user' or 'project'`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[`{name}`](#{name.lower()})"
    if "enum" in schema:
        return " or ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "oneOf" in schema:
        return " or ".join(_type(s) for s in schema["oneOf"])
    types = schema.get("type", "any")
    names = [types] if isinstance(types, str) else list(types)
    text = " or ".join("list" if t == "array" else t for t in names)
    if "array" in names and "items" in schema:
        text = text.replace("list", f"list of {_type(schema['items'])}", 1)
    bounds = []
    if "minimum" in schema and "maximum" in schema:
        bounds.append(f"{schema['minimum']}–{schema['maximum']}")
    elif "minimum" in schema:
        bounds.append(f"≥ {schema['minimum']}")
    elif "maximum" in schema:
        bounds.append(f"≤ {schema['maximum']}")
    if "maxLength" in schema:
        bounds.append(f"≤ {schema['maxLength']:,} chars")
    if "maxItems" in schema:
        bounds.append(f"≤ {schema['maxItems']} items")
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _fields(schema: dict[str, Any], *, kind: str) -> str:
    """A table of an object's fields; anything else as one line."""
    if "oneOf" in schema:
        return "".join(
            f"\n{'Success' if i == 0 else 'Failure'}:\n" + _fields(s, kind=kind)
            for i, s in enumerate(schema["oneOf"])
        )
    properties = schema.get("properties")
    if not properties:
        return f"\n{_type(schema)}\n" if schema.get("type") != "object" else "\nan object\n"
    required = set(schema.get("required", ()))
    rows = [f"\n| {kind} | type | required | meaning |\n|---|---|---|---|\n"]
    for name, sub in properties.items():
        mark = "yes" if name in required else ""
        meaning = sub.get("description", "")
        rows.append(f"| `{name}` | {_type(sub)} | {mark} | {meaning} |\n")
    return "".join(rows)


def render() -> str:
    parts = [HEADER, "\n## Methods\n"]
    for name, method in METHODS.items():
        parts.append(f"\n### `{name}`\n\n{method.summary}\n\nParams:\n")
        parts.append(
            _fields(method.params, kind="param") if method.params["properties"] else "\nnone\n"
        )
        parts.append("\nResult:\n")
        parts.append(_fields(method.result, kind="field"))
        if method.errors:
            listed = ", ".join(f"`{code}`" for code in method.errors)
            parts.append(f"\nErrors beyond the protocol's: {listed}.\n")
    parts.append("\n## Notifications\n")
    for name, (summary, params) in NOTIFICATIONS.items():
        parts.append(f"\n### `{name}`\n\n{summary}\n\nParams: {_type(params)}\n")
    parts.append("\n## Shapes\n")
    for name, schema in DEFS.items():
        parts.append(f"\n### {name}\n")
        parts.append(_fields(schema, kind="field"))
    parts.append("\n## Error codes\n\n| code | meaning |\n|---:|---|\n")
    rows = [(code, f"protocol: {name}") for name, code in PROTOCOL_CODES.items()]
    rows += [(number, f"`{code}` (`SkillpackError.code`)") for code, number in ERROR_CODES.items()]
    rows += [(code, f"server: {name}") for name, code in RPC_CODES.items()]
    parts.extend(f"| {code} | {meaning} |\n" for code, meaning in rows)
    parts.append(
        "\nA skillpack error's `data` holds `code` (the envelope code, e.g. `NOT_FOUND`), "
        "`type` (the exception's class) and `candidates` when there are some.\n"
    )
    return "".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = RPC_MD.read_text(encoding="utf-8") if RPC_MD.exists() else ""
        if current != text:
            print("docs/rpc.md is stale: run python docs/gen_rpc_doc.py", file=sys.stderr)
            return 1
        return 0
    RPC_MD.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
