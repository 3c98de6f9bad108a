"""The flags both servers take, one spelling and one meaning (`skillpack mcp` and
`skillpack serve`), and the bearer token they read or write.

`--transport stdio|http`, `--host`, `--port` (default `DEFAULT_PORT` for both),
`--token-file PATH` (read the token clients must send) and `--token-file-out PATH`
(generate one and write it there, mode 0600). `serve`'s old spellings stay one
release as deprecated aliases that print a line on stderr and still work:
`--stdio`/`--http` (for `--transport`) and a `--token-file` that names no file yet
(it used to write the generated token there: it still does).
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import click

from .._errors import UsageError
from ._output import warn

DEFAULT_PORT: Final = 8765
"""The port both servers bind over HTTP unless `--port` says otherwise (0 picks a free
one, printed at start): `skillpack mcp`'s documented port, so an MCP client's URL
and an app server's stay put between runs."""

Transport = Literal["stdio", "http"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerFlags:
    """What `--transport/--host/--port/--token-file/--token-file-out` ask for."""

    transport: Transport
    host: str
    port: int
    token_file: Path | None
    """Read the token clients must send from this file."""
    token_file_out: Path | None
    """Generate a token and write it to this file (0600)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Token:
    """The bearer token a server requires, and the file holding it."""

    value: str
    path: Path
    written: bool
    """This process wrote the file (`serve` removes it when it stops)."""


def read_token(path: Path) -> str:
    """The bearer token in `path` (surrounding whitespace dropped).

    Raises:
        UsageError: the file cannot be read, or holds no token.
    """
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the token file {path}: {exc}.") from exc
    if not token or any(c.isspace() for c in token):
        raise UsageError(
            f"The token file {path} must hold one token (no spaces); write e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE`, "
            "or let the server write one with --token-file-out FILE."
        )
    return token


def write_token(path: Path | None) -> Token:
    """A new random token, written to `path` (default: a file in a private folder under
    the user config dir) with mode 0600, replacing what was there."""
    from .._paths import user_config_dir

    value = secrets.token_urlsafe(32)
    if path is None:
        folder = user_config_dir() / "serve"
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        path = folder / f"token-{os.getpid()}"
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(value + "\n")
    os.replace(temp, path)
    return Token(value=value, path=path, written=True)


def chosen_token(flags: ServerFlags, *, command: str, always: bool) -> Token | None:
    """The token `flags` ask for: read (`--token-file`), or generated and written
    (`--token-file-out`; with `always`, into a private file when neither flag is given).

    `serve --token-file` naming no file yet is the old spelling of `--token-file-out`:
    the token is written there as before, with a deprecation line on stderr.

    Raises:
        UsageError: both flags, or a token file that cannot be read.
    """
    if flags.token_file is not None and flags.token_file_out is not None:
        raise UsageError(
            f"{command}: give --token-file (read a token) or --token-file-out (write a "
            "new one), not both."
        )
    if flags.token_file is not None:
        if command == "serve" and not flags.token_file.exists():
            deprecated(
                f"serve --token-file {flags.token_file} (a file that does not exist yet) "
                "writes a new token there, as before; --token-file now reads a token, so "
                "write --token-file-out for this"
            )
            return write_token(flags.token_file)
        return Token(value=read_token(flags.token_file), path=flags.token_file, written=False)
    if flags.token_file_out is not None or always:
        return write_token(flags.token_file_out)
    return None


def deprecated(what: str) -> None:
    """One line on stderr: an old spelling that still works for one more release."""
    warn(f"deprecated: {what}. The old spelling goes in the next release.")


def server_options(*, legacy_serve: bool = False) -> Callable[[Callable[..., Any]], Any]:
    """Add the shared server flags to a command, given to it as `server: ServerFlags`.

    `legacy_serve` also takes `serve`'s old `--stdio`/`--http` (hidden from the help).
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(
            *args: Any,
            transport: Transport | None,
            host: str,
            port: int,
            token_file: Path | None,
            token_file_out: Path | None,
            old_transport: Transport | None = None,
            **kwargs: Any,
        ) -> Any:
            if old_transport is not None:
                if transport is not None and transport != old_transport:
                    raise click.UsageError(
                        f"--{old_transport} and --transport {transport} disagree; "
                        f"give --transport {old_transport} or --transport {transport}."
                    )
                deprecated(f"serve --{old_transport}; write --transport {old_transport}")
                transport = old_transport
            server = ServerFlags(
                transport=transport or "stdio",
                host=host,
                port=port,
                token_file=token_file,
                token_file_out=token_file_out,
            )
            return func(*args, server=server, **kwargs)

        options = [
            click.option(
                "--transport",
                type=click.Choice(["stdio", "http"]),
                default=None,
                help="stdio (the default) for a client that starts the server; http to "
                "listen on --host and --port.",
            ),
            click.option(
                "--host",
                default="127.0.0.1",
                show_default=True,
                help="HTTP: the address to listen on.",
            ),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=DEFAULT_PORT,
                show_default=True,
                help="HTTP: the port (0 picks a free one; the address is printed).",
            ),
            click.option(
                "--token-file",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="HTTP: require `Authorization: Bearer <token>`, the token read from "
                "this file.",
            ),
            click.option(
                "--token-file-out",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="HTTP: generate the token clients must send and write it to this "
                "file (mode 0600).",
            ),
        ]
        if legacy_serve:
            options += [
                click.option("--stdio", "old_transport", flag_value="stdio", hidden=True),
                click.option("--http", "old_transport", flag_value="http", hidden=True),
            ]
        decorated: Callable[..., Any] = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate
