"""The one schema: well-formed, fully understood by the params checker, matched by the
method table, the typed client's TypedDicts and docs/rpc.md; every error mapped."""

from __future__ import annotations

import importlib.util
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import skillpack
from skillpack import _errors
from skillpack.rpc import _types
from skillpack.rpc._codes import ERROR_CODES, PROTOCOL_CODES, RPC_CODES, code_for, error_object
from skillpack.rpc._live import Discovery, Live
from skillpack.rpc._methods import Methods
from skillpack.rpc._params import SUPPORTED
from skillpack.rpc._schema import DEFS, METHODS, NOTIFICATIONS, document
from skillpack.runtime._tools import ToolCallError

DOCS = Path(__file__).resolve().parents[2] / "docs"


def subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for key, value in schema.items():
            if key == "properties":
                for sub in value.values():
                    yield from subschemas(sub)
            elif key in ("items", "additionalProperties"):
                yield from subschemas(value)
            elif key == "oneOf":
                for sub in value:
                    yield from subschemas(sub)


def test_every_schema_is_valid_json_schema() -> None:
    for method in METHODS.values():
        for schema in (method.params, method.result):
            jsonschema.Draft202012Validator.check_schema({**schema, "$defs": DEFS})
    for _summary, schema in NOTIFICATIONS.values():
        jsonschema.Draft202012Validator.check_schema({**schema, "$defs": DEFS})
    jsonschema.Draft202012Validator.check_schema(document())


@pytest.mark.parametrize("name", sorted(METHODS))
def test_params_schemas_use_only_what_the_params_checker_understands(name: str) -> None:
    params = METHODS[name].params
    assert params["type"] == "object" and params["additionalProperties"] is False
    for sub in subschemas(params):
        assert set(sub) - {"properties"} <= SUPPORTED | {"properties"}, (name, sub)


def test_the_method_table_and_the_schema_name_the_same_methods(tmp_path: Path) -> None:
    methods = Methods(Live(Discovery(cwd=str(tmp_path)), notify=lambda m, p: None))
    assert set(methods.table) == set(METHODS)


def test_every_public_exception_has_its_own_code_in_the_domain_range() -> None:
    public = {
        getattr(skillpack, name)
        for name in skillpack.__all__
        if isinstance(getattr(skillpack, name), type)
        and issubclass(getattr(skillpack, name), _errors.SkillpackError)
    }
    public |= {
        cls
        for cls in vars(_errors).values()
        if isinstance(cls, type) and issubclass(cls, _errors.SkillpackError)
    }
    public.add(ToolCallError)
    assert {cls.code for cls in public} <= set(ERROR_CODES)
    assert set(ERROR_CODES) == set(_errors.ERROR_CODES)
    codes = [*ERROR_CODES.values(), *RPC_CODES.values()]
    assert len(codes) == len(set(codes))
    assert all(-32019 <= code <= -32000 for code in codes)
    assert set(PROTOCOL_CODES.values()) == {-32700, -32600, -32601, -32602, -32603}


class _Unlisted(_errors.SkillNotFoundError):
    pass


@pytest.mark.parametrize(
    ("exc", "code", "envelope_code"),
    [
        (_errors.SkillNotFoundError("no", candidates=["alpha"]), -32004, "NOT_FOUND"),
        (_errors.AmbiguousSkillError("two", candidates=["a:x", "b:x"]), -32005, "AMBIGUOUS"),
        (_errors.SkillPermissionError("denied"), -32007, "PERMISSION_DENIED"),
        (_errors.SkillIOError("gone"), -32008, "IO_ERROR"),
        (_errors.SkillParseError("broken"), -32001, "INVALID_SKILL"),
        (_errors.UsageError("bad"), -32003, "INVALID_PARAM"),
        (ToolCallError("DISABLED", "off"), -32006, "DISABLED"),
        (ToolCallError("EXECUTION_ERROR", "no runner"), -32009, "EXECUTION_ERROR"),
        (_Unlisted("sub"), -32004, "NOT_FOUND"),
    ],
)
def test_skillpack_errors_map_to_their_code_with_the_envelope_code_in_data(
    exc: _errors.SkillpackError, code: int, envelope_code: str
) -> None:
    assert code_for(exc) == code
    error = error_object(exc)
    assert error["code"] == code and error["message"] == str(exc)
    assert error["data"]["code"] == envelope_code
    assert error["data"]["type"] == type(exc).__name__
    assert error["data"].get("candidates", []) == list(exc.candidates)


def test_any_other_exception_is_an_internal_error_that_names_it() -> None:
    error = error_object(KeyError("x"))
    assert error["code"] == -32603
    assert "KeyError" in error["message"]


TYPED = {
    "skills.list": _types.SkillsListResult,
    "skills.reload": _types.ReloadResult,
    "skills.config.write": _types.ConfigWriteResult,
    "session.open": _types.SessionOpenResult,
    "session.close": _types.SessionCloseResult,
    "session.note_paths": _types.NotePathsResult,
    "turn.prepare": _types.TurnResult,
    "context.inspect": _types.ContextReport,
}
TYPED_DEFS = {
    "Skill": _types.SkillEntry,
    "Problem": _types.ProblemEntry,
    "Workspace": _types.WorkspaceListing,
    "LeftOut": _types.LeftOutEntry,
    "Change": _types.Change,
    "ToolError": _types.ToolError,
    "Activation": _types.ActivationEntry,
    "Diagnostic": _types.DiagnosticEntry,
}


@pytest.mark.parametrize(
    ("typed", "schema"),
    [(t, METHODS[m].result) for m, t in TYPED.items()]
    + [(t, DEFS[d]) for d, t in TYPED_DEFS.items()],
    ids=[*TYPED, *TYPED_DEFS],
)
def test_the_clients_typed_results_agree_with_the_schema(typed: Any, schema: Any) -> None:
    hints = typing.get_type_hints(typed)
    assert set(hints) == set(schema["properties"])
    assert typed.__required_keys__ == set(schema["required"])


def test_docs_rpc_md_is_current() -> None:
    spec = importlib.util.spec_from_file_location("gen_rpc_doc", DOCS / "gen_rpc_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.RPC_MD.read_text(encoding="utf-8") == module.render(), (
        "docs/rpc.md is stale: run python docs/gen_rpc_doc.py"
    )
