"""The method table: each JSON-RPC method as a call into runtime, nothing more.

Params arrive checked against `_schema.METHODS` (types, required keys, bounds). Tool-like
methods (`skills.search`, `skills.load`, `skills.read_file`) answer the tools' envelope
`{ok, data|error}` as their result; the others raise, and `_codes` maps the error.

Every method serves its caller's grant (`_caller.current_caller`): a workspace as
`Live.view` shows it to that grant, sessions that grant opened. Without JWT auth
there is no caller and every skill is served.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..runtime._context import context_report
from ..runtime._left_out import catalog_version, left_out
from ..runtime._noted import note_paths
from ..runtime._summary import summarizer
from ..runtime._tools import SkillTools
from ..runtime._workspace import write_enabled
from ._caller import current_caller
from ._codes import ParamError
from ._frame import Encoded, encode
from ._live import GrantView, Live, OpenSession, Workspace
from ._schema import document

Params = dict[str, Any]
Handler = Callable[[Params], Any]


class Methods:
    """Every method of the server over one `Live` state."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.table: dict[str, Handler] = {
            "skills.list": self.skills_list,
            "skills.search": self.skills_search,
            "skills.load": self.skills_load,
            "skills.read_file": self.skills_read_file,
            "skills.reload": self.skills_reload,
            "skills.config.write": self.skills_config_write,
            "session.open": self.session_open,
            "session.close": self.session_close,
            "session.note_paths": self.session_note_paths,
            "turn.prepare": self.turn_prepare,
            "context.inspect": self.context_inspect,
            "rpc.discover": self.rpc_discover,
        }

    def run(self, handler: Handler, params: Params) -> Any:
        """`handler(params)`; the session the params name, when the caller opened one,
        counts as busy until it returns, so a full table never closes it meanwhile."""
        session_id = params.get("session")
        if session_id is None:
            return handler(params)
        with self.live.busy(session_id, _grant()):
            return handler(params)

    # -- the caller's view ----------------------------------------------------------

    def _view(self, workspace: Workspace) -> Workspace | GrantView:
        """`workspace` as the caller's grant sees it."""
        return self.live.view(workspace, _grant())

    def _session(self, session_id: str) -> OpenSession:
        """A session the caller's grant opened."""
        return self.live.session(session_id, _grant())

    # -- catalogs -------------------------------------------------------------------

    def skills_list(self, params: Params) -> Any:
        cwds = params.get("cwds") or [None]
        extra = list(params.get("extra_roots", ()))
        # Extra roots given for one cwd apply to that cwd only.
        own: dict[str, list[str]] = {}
        named = {_same_cwd(cwd) for cwd in cwds if cwd is not None}
        for index, entry in enumerate(params.get("per_cwd_extra_roots", ())):
            key = _same_cwd(entry["cwd"])
            if key not in named:
                raise ParamError(f"per_cwd_extra_roots[{index}].cwd", "is not one of `cwds`")
            own.setdefault(key, []).extend(entry["extra_roots"])
        listings = []
        for index, cwd in enumerate(cwds):
            roots = extra + own.get(_same_cwd(cwd), []) if cwd is not None else extra
            workspace = self.live.workspace(cwd, roots, field_name=f"cwds[{index}]")
            if params.get("force_reload"):
                self.live.refresh(workspace)
            listings.append(_listing(self._view(workspace)))
        return Encoded(b'{"data":[' + b",".join(listings) + b"]}")

    def skills_reload(self, params: Params) -> Any:
        grant = _grant()
        workspaces = self.live.workspaces(params.get("cwd"))
        return {"data": [self.live.refresh(w, grant) for w in workspaces]}

    def skills_config_write(self, params: Params) -> Any:
        workspace = self.live.workspace(params.get("cwd"))
        toggled = write_enabled(
            self._view(workspace).live.catalog,
            params["ref"],
            params["enabled"],
            scope=params["target"],
            cwd=workspace.cwd,
            user=self.live.discovery.options.include_user,
        )
        self.live.reconfigure()
        # Open sessions keep the config they opened with, but follow this one change:
        # to the state every config file now gives (another file may still decide).
        for entry in self.live.all_sessions():
            same = entry.session.catalog.at_path(toggled.skill.key)
            if same is not None:
                entry.session.skills.set_enabled(same, toggled.enabled)
        return toggled.to_dict()

    # -- the tools --------------------------------------------------------------------

    def _tools(self, params: Params, *, stateless: bool = False) -> SkillTools:
        """The tools of the session named, else of the workspace of `cwd`.

        `stateless`: a call that records state (a load) without a session runs in a
        throwaway session, so one client's loads never turn another's into reminders.
        """
        session_id = params.get("session")
        if session_id is not None:
            return self._session(session_id).tools
        view = self._view(self.live.workspace(params.get("cwd")))
        if not stateless:
            return view.tools
        return SkillTools(view.live.conversation())

    def skills_search(self, params: Params) -> Any:
        # Searching keeps no session state, and a session sees its workspace's catalog
        # with its config: the workspace's tools answer, over one index connection per
        # workspace instead of one per session.
        session_id = params.get("session")
        if session_id is not None:
            tools = self._view(self._session(session_id).workspace).tools
        else:
            tools = self._view(self.live.workspace(params.get("cwd"))).tools
        return tools.call("skill_search", _pick(params, "query", "limit", "scope"))

    def skills_load(self, params: Params) -> Any:
        args = _pick(params, "name", "path", "args")
        return self._tools(params, stateless=True).call("skill_load", args)

    def skills_read_file(self, params: Params) -> Any:
        args = {"skill": params["skill"], "path": params["path"]}
        return self._tools(params).call("skill_read_file", args)

    # -- sessions ---------------------------------------------------------------------

    def session_open(self, params: Params) -> Any:
        # Held while its answer is built, then released as used now: a client arriving
        # meanwhile cannot take its place, and an eviction would choose it last.
        entry = self.live.open_session(
            params.get("cwd"), params.get("extra_roots", ()), grant=_grant(), held=True
        )
        try:
            return {
                "session": entry.id,
                "cwd": entry.workspace.cwd,
                "skills": len(entry.session.skills.model_skills()),
            }
        finally:
            self.live.release(entry)

    def session_close(self, params: Params) -> Any:
        return {"closed": self.live.close_session(params["session"], _grant())}

    def session_note_paths(self, params: Params) -> Any:
        entry = self._session(params["session"])
        return note_paths(entry.session, params["paths"], opened_from=entry.workspace.live)

    def turn_prepare(self, params: Params) -> Any:
        session = self._session(params["session"]).session
        return session.prepare_turn(params["text"], invoker=params.get("invoker", "user")).to_dict()

    def context_inspect(self, params: Params) -> Any:
        session_id = params.get("session")
        if session_id is not None:
            session = self._session(session_id).session
        else:
            session = self._view(self.live.workspace(params.get("cwd"))).live
        return context_report(
            session,
            context_window=params.get("context_window"),
            budget_chars=params.get("budget_chars"),
            format=params.get("format", "xml"),
            include_skills=params.get("include_skills", False),
            tools=params.get("tools"),
            mode=params.get("catalog_mode"),
        ).to_dict()

    def rpc_discover(self, params: Params) -> Any:
        return document()


def _grant() -> Any:
    """The `SkillGrant` of the message's caller (None: every skill)."""
    caller = current_caller()
    return None if caller is None else caller.grant


def _pick(params: Params, *keys: str) -> dict[str, Any]:
    return {key: params[key] for key in keys if key in params}


def _same_cwd(cwd: str) -> str:
    """A cwd as `skills.list` compares them: absolute and normalized."""
    return os.path.normpath(os.path.abspath(cwd))


def _listing(workspace: Workspace | GrantView) -> bytes:
    """The workspace's `Workspace` entry as JSON, encoded once per catalog and config."""
    live = workspace.live
    catalog, config = live.catalog, live.config
    cached = workspace.listing
    if cached is not None and cached[0] is catalog and cached[1] is config:
        return cached[2]
    summary = summarizer(config, live.skills.is_enabled)
    standing = {"is_enabled": live.skills.is_enabled, "is_visible": live.skills.is_visible}
    encoded = encode(
        {
            "cwd": workspace.cwd,
            "skills": [summary(s) for s in catalog.skills],
            "errors": [p.to_dict() for p in catalog.problems],
            "version": catalog_version(catalog, **standing),
            "left_out": [e.to_dict() for e in left_out(catalog, **standing)],
        }
    )
    workspace.listing = (catalog, config, encoded)
    return encoded
