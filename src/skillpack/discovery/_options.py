"""What to discover and how: one frozen value instead of a dozen keywords.

`DiscoveryOptions` carries every choice a discovery run makes (which scopes, which
extra roots, the walk's bounds, the index) from whoever decides them (the CLI's
flags, `skillpack serve`, `Session.open`, a program) down to `default_roots` and
`discover_roots`, unchanged on the way. Where discovery starts (`cwd`) is not in it:
the same options serve every working directory of a server.

`chosen_options` is what `roots=` means wherever a program opens a session
(`Session.open`, `skillpack.mcp.open_server`, the framework integrations' `Skills`):
the roots given are the skills served, and a default scope joins them only when
`include=` names it; without `roots=`, every default scope `include=` leaves in.

`merge_keywords` is how the public entry points that keep their keywords
(`discover`, `Session.open`, `skillpack.mcp.open_server`) combine them with an
`options=` value: a keyword left at its default defers to the options, one given
fills a field the options left at its default, and one that disagrees with a field
the options set is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, cast, get_args

from .._errors import UsageError
from .._limits import MAX_DEPTH, MAX_DIRS, MAX_SKILL_FILE_BYTES
from .._model import Root
from .._paths import FAMILIES


@dataclass(frozen=True, kw_only=True, slots=True)
class DiscoveryOptions:
    """Which roots discovery searches and how deep: one value, shared by every surface.

    Sequences are kept as tuples (the value is hashable); a folder given as one `str`
    where a list is expected, or a bound below its minimum, raises `UsageError`.
    """

    roots: Sequence[Root | str | os.PathLike[str]] | None = None
    """Search exactly these roots instead of the default ones: `Root` values, or
    folders taken as `extra` roots in the order given (kept as `Root` values);
    `extra_roots` are still added after them. None: the default roots."""
    extra_roots: Sequence[str | os.PathLike[str]] = ()
    """Folders of scope `extra`, in precedence order (a missing one is reported)."""
    include_user: bool = True
    """Search the user roots (and read the user config, where a config is read)."""
    include_system: bool = True
    """Search the skills bundled with skillpack."""
    include_repo: bool = True
    """Search the repo roots from the working directory up to the project root."""
    include_admin: bool = True
    """Search the admin root (`$SKILLPACK_ADMIN_DIR`, else `/etc/skillpack/skills`)."""
    repo_skills_dir: bool | None = None
    """Also take `skills/` in each repo folder as a root (None: the config's
    `repo_skills_dir` where a config is read, else no)."""
    strict: bool = False
    """Validate strictly: spec warnings become errors."""
    use_cache: bool = True
    """Read and write the persistent index; False touches no cache file."""
    cache_dir: str | os.PathLike[str] | None = None
    """Folder of the index file (None: the user cache folder)."""
    max_depth: int | None = None
    """Deepest folder level searched below a root; 0 searches the root folder alone
    (None: the config's `[discovery] max_depth` where a config is read, else 6)."""
    max_dirs: int | None = None
    """Most folders listed per root (None: the config's `[discovery] max_dirs` where a
    config is read, else 2000)."""
    max_file_bytes: int = MAX_SKILL_FILE_BYTES
    """A larger SKILL.md is reported (`file-too-large`), not read."""
    note_paths: Sequence[str | os.PathLike[str]] = ()
    """Paths a host works on: the repo roots of the folders between each and the
    project root join the repo scope (nested packages of a monorepo)."""
    load_helper: bool | None = None
    """Load a big catalog's new SKILL.md files on a second core, in one helper process
    per run: False never starts one, True whenever the machine has a spare core. None
    (the default) is True unless the environment says `SKILLPACK_LOAD_HELPER=0`."""
    folders_off: Sequence[str] | None = None
    """Families of default folders left out (`_paths.FAMILIES`: `agents`, `claude`,
    `opencode`, `codex`, `copilot`, `gemini`, `cursor`), in the repo and user scopes
    (None: the config's `[discovery] folders_off` where a config is read, else none)."""

    def __post_init__(self) -> None:
        if self.roots is not None:
            object.__setattr__(self, "roots", as_roots(self.roots))
        object.__setattr__(self, "extra_roots", _paths("extra_roots", self.extra_roots))
        object.__setattr__(self, "note_paths", _paths("note_paths", self.note_paths))
        if self.folders_off is not None:
            object.__setattr__(self, "folders_off", _families(self.folders_off))
        if self.cache_dir is not None:
            if not isinstance(self.cache_dir, str | os.PathLike):
                raise _Invalid(
                    "cache_dir",
                    f"got {type(self.cache_dir).__name__} {self.cache_dir!r}; give a folder "
                    "(str or pathlib.Path), or None.",
                )
            object.__setattr__(self, "cache_dir", os.fspath(self.cache_dir))
        _check_bound("max_depth", self.max_depth, 0)
        _check_bound("max_dirs", self.max_dirs, 1)
        _check_bound("max_file_bytes", self.max_file_bytes, 1)
        if self.load_helper is not None and not isinstance(self.load_helper, bool):
            raise _Invalid(
                "load_helper",
                f"takes True, False or None, not {type(self.load_helper).__name__} "
                f"{_quoted(self.load_helper)}.",
            )

    @property
    def limits(self) -> tuple[int, int, int, bool]:
        """(max_depth, max_dirs, max_file_bytes, strict) of a run: what shapes each
        root's walk, a bound left to the config taken as the built-in one."""
        return (
            MAX_DEPTH if self.max_depth is None else self.max_depth,
            MAX_DIRS if self.max_dirs is None else self.max_dirs,
            self.max_file_bytes,
            self.strict,
        )

    @property
    def root_values(self) -> tuple[Root, ...] | None:
        """`roots` as the `Root` values they were turned into (None: the default roots)."""
        return cast("tuple[Root, ...] | None", self.roots)


class _Invalid(UsageError):
    """A field that cannot work; the message names the call it came through."""

    def __init__(self, field: str, detail: str) -> None:
        self.field = field
        self.detail = detail
        super().__init__(f"DiscoveryOptions({field}=...) {detail.format(kw=field)}")

    def through(self, call: str, keyword: str) -> UsageError:
        """The same error as the caller's keyword `keyword` of `call` saw it."""
        return UsageError(f"{call}({keyword}=...) {self.detail.format(kw=keyword)}")


def as_roots(roots: Sequence[Root | str | os.PathLike[str]]) -> tuple[Root, ...]:
    """`Root` values as given; a folder given as a `str` or path is an `extra` root."""
    if isinstance(roots, str | os.PathLike):
        raise _Invalid(
            "roots",
            "takes a list of folders or Root values, not one folder; "
            f"write {{kw}}=[{_quoted(roots)}].",
        )
    result: list[Root] = []
    for rank, root in enumerate(roots):
        if isinstance(root, Root):
            result.append(root)
        elif isinstance(root, str | os.PathLike):
            path = os.path.abspath(os.path.expanduser(os.fspath(root)))
            result.append(Root(path=path, scope="extra", rank=rank))
        else:
            raise _Invalid(
                "roots",
                f"got {type(root).__name__} {_quoted(root)}; give folders "
                "(str or pathlib.Path) or skillpack.Root values.",
            )
    return tuple(result)


def _quoted(value: object) -> str:
    """`repr` of a value (a path as its text), safe inside a `str.format` template."""
    text = repr(os.fspath(value) if isinstance(value, os.PathLike) else value)
    return text.replace("{", "{{").replace("}", "}}")


def _paths(name: str, value: Sequence[str | os.PathLike[str]]) -> tuple[str, ...]:
    """A sequence of paths as a tuple of `str`; one path where a list belongs is refused
    (a `str` is a sequence too: its letters would each become a folder)."""
    if isinstance(value, str | os.PathLike):
        raise _Invalid(name, f"takes a list of paths, not one; write {{kw}}=[{_quoted(value)}].")
    result: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str | os.PathLike):
            raise _Invalid(
                name,
                f"got {type(item).__name__} {_quoted(item)} at index {index}; give paths "
                "(str or pathlib.Path).",
            )
        result.append(os.fspath(item))
    return tuple(result)


def _families(value: Sequence[str]) -> tuple[str, ...]:
    """`folders_off` as a tuple of known family names; anything else is refused."""
    if isinstance(value, str):
        raise _Invalid(
            "folders_off", f"takes a list of families, not one; write {{kw}}=[{_quoted(value)}]."
        )
    names = tuple(value)
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise _Invalid(
            "folders_off",
            f"got {_quoted(unknown[0])}, which is no family of folders; use some of "
            f"{', '.join(FAMILIES)}.",
        )
    return names


def _check_bound(name: str, value: int | None, least: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(name, f"takes a whole number, not {type(value).__name__} {_quoted(value)}.")
    if value < least:
        raise _Invalid(
            name, f"got {value}, below {least}, the least that works; give {{kw}}={least} or more."
        )


IncludeScope = Literal["repo", "user", "admin", "system"]
"""A default scope `include=` can ask for: the repo chain from cwd up, the user's
folders (and the user config), the admin root, the skills bundled with skillpack."""
INCLUDE_SCOPES: tuple[IncludeScope, ...] = get_args(IncludeScope)

DEFAULT_OPTIONS = DiscoveryOptions()
"""Every field at its default: what a call without `options=` discovers with."""


def chosen_options(
    where: str,
    options: DiscoveryOptions | None,
    *,
    roots: Sequence[Root | str | os.PathLike[str]] | None,
    extra_roots: Sequence[str | os.PathLike[str]],
    include: Sequence[IncludeScope] | None,
    include_user: bool,
    include_system: bool,
    **fields_given: Any,
) -> DiscoveryOptions:
    """The options a session opener's keywords ask for (see the module docstring).

    `roots` given: exactly those folders, then `extra_roots`, then the default roots
    of each scope in `include` (none by default; the config's `roots` come only with
    a scope). `roots` None: the default roots of every scope in `include` (default:
    all), then `extra_roots`. `include_user=False`/`include_system=False` take a scope
    out either way. `fields_given` are other `DiscoveryOptions` fields (`use_cache`,
    `max_depth`, ...) at the opener's defaults when not given. Each root named here
    must be a folder (`require_folders`); `options` merges as `merge_keywords` says.

    Raises:
        UsageError: an unknown scope in `include`, a root that is not a folder, or a
            keyword that disagrees with `options`.
    """
    if isinstance(include, str) or (
        include is not None and not set(include) <= set(INCLUDE_SCOPES)
    ):
        raise UsageError(
            f"{where}(include={include!r}) takes a list of scopes among "
            f"{', '.join(map(repr, INCLUDE_SCOPES))}, e.g. include=('user', 'system')."
        )
    require_folders(where, keywords={"roots": roots or (), "extra_roots": extra_roots})
    scopes = set(INCLUDE_SCOPES if include is None and roots is None else include or ())
    if not include_user:
        scopes.discard("user")
    if not include_system:
        scopes.discard("system")
    keywords: dict[str, Any] = {
        "extra_roots": extra_roots,
        **{f"include_{scope}": scope in scopes for scope in INCLUDE_SCOPES},
        **fields_given,
    }
    if roots is not None and (not scopes or isinstance(roots, str | os.PathLike)):
        keywords["roots"] = roots  # exactly these: no default root, no config's root
    elif roots is not None:
        try:
            given = _paths("roots", [r.path if isinstance(r, Root) else r for r in roots])
            keywords["extra_roots"] = (*given, *_paths("extra_roots", extra_roots))
        except _Invalid as error:
            raise error.through(where, error.field) from None
    defaults = {
        "roots": None,
        "extra_roots": (),
        **{f"include_{scope}": True for scope in INCLUDE_SCOPES},
        **{name: getattr(DEFAULT_OPTIONS, name) for name in fields_given},
    }
    return merge_keywords(options, where=where, keywords=keywords, defaults=defaults)


def require_folders(
    where: str,
    *,
    keywords: Mapping[str, Sequence[Root | str | os.PathLike[str]]],
) -> None:
    """Refuse a root a program names in a keyword (`roots=["skilz"]`) that is not a
    folder: a typo would otherwise serve nothing, silently. Roots in an `options=`
    value (what the CLI's `--root` and the servers pass) are left to discovery, which
    reports a missing one as a `root-missing` problem and picks it up once it exists.

    Raises:
        UsageError: a folder that does not exist or is a file, named with the keyword
            and how to fix it.
    """
    for keyword, roots in keywords.items():
        if isinstance(roots, str | os.PathLike):
            continue  # one folder where a list belongs: `DiscoveryOptions` says so
        for root in cast("Sequence[object]", roots):  # anything, at run time
            if isinstance(root, Root):
                path = root.path
            elif isinstance(root, str | os.PathLike):
                path = os.path.expanduser(os.fspath(root))
            else:
                continue  # not a folder at all: `DiscoveryOptions` says so
            full = os.path.abspath(path)
            if os.path.isdir(full):
                continue
            what = "is a file, not a folder" if os.path.exists(full) else "does not exist"
            raise UsageError(
                f"{where}({keyword}=[...]) names {os.fspath(path)!r}, which {what} "
                f"({full}). Fix the path (a relative one starts at the current "
                f"directory, {os.getcwd()}), create the folder first, or pass it in "
                "options=DiscoveryOptions(extra_roots=[...]) to have a missing root "
                "reported as a problem and discovered once it exists."
            )


def merge_keywords(
    options: DiscoveryOptions | None,
    *,
    where: str,
    keywords: Mapping[str, Any],
    defaults: Mapping[str, Any],
    spelled: Mapping[str, str] | None = None,
) -> DiscoveryOptions:
    """The options a call with both `keywords` and `options=` asks for.

    Args:
        options: The `options=` value given (None: the keywords alone decide).
        where: The call, for messages (`"Session.open"`).
        keywords: Field name -> the value the caller's keyword has.
        defaults: Field name -> that keyword's default in the caller's signature: a
            keyword at its default counts as not given.
        spelled: Field name -> the caller's keyword, where it is named otherwise
            (`Session.open(roots=...)` is `extra_roots`).

    Raises:
        UsageError: a given keyword differs from a field `options` sets (not at its
            default); the message names both.
    """
    try:
        given = DiscoveryOptions(**keywords)
    except _Invalid as error:
        raise error.through(where, (spelled or {}).get(error.field, error.field)) from None
    if options is None:
        return given
    if not isinstance(options, DiscoveryOptions):
        raise UsageError(
            f"{where}(options=...) takes a skillpack.DiscoveryOptions, not "
            f"{type(options).__name__}."
        )
    unset = DiscoveryOptions(**defaults)
    changes: dict[str, Any] = {}
    for field in fields(DiscoveryOptions):
        name = field.name
        if name not in keywords:
            continue
        mine = getattr(given, name)
        if mine == getattr(unset, name):
            continue  # the keyword was left at its default
        theirs = getattr(options, name)
        if theirs == mine:
            continue
        if theirs != getattr(DEFAULT_OPTIONS, name):
            keyword = (spelled or {}).get(name, name)
            raise UsageError(
                f"{where}() got {keyword}={keywords[name]!r} and options.{name}={theirs!r}; "
                f"they differ, so pass {keyword} one way only: as the keyword or in options."
            )
        changes[name] = mine
    return replace(options, **changes) if changes else options
