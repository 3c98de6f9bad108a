"""Each error carries its code; every surface maps every code (and nothing else).

The code is an attribute of the exception (`SkillpackError.code`); the CLI maps it to
an exit status, the app server to a JSON-RPC number, the MCP server to an MCP error.
A new exception class without a code of the list, or a new code a surface does not
map, fails here.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import skillpack
from skillpack import _errors
from skillpack.cli._errors import EXIT_CODES, CommandFailed
from skillpack.rpc._codes import ERROR_CODES as RPC_NUMBERS
from skillpack.rpc._codes import code_for, error_object
from skillpack.runtime._tools import ToolCallError, failure


def _every_error_class() -> set[type[_errors.SkillpackError]]:
    """Every `SkillpackError` subclass defined anywhere in skillpack (modules imported)."""
    for info in pkgutil.walk_packages(skillpack.__path__, "skillpack."):
        if info.name.startswith(("skillpack.tui", "skillpack.mcp")):
            continue  # optional extras; their errors are the library's
        importlib.import_module(info.name)
    found: set[type[_errors.SkillpackError]] = set()
    todo: list[type[_errors.SkillpackError]] = [_errors.SkillpackError]
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("skillpack.") and cls not in found:
            found.add(cls)
            todo.extend(cls.__subclasses__())
    return found


def test_every_exception_class_carries_one_of_the_codes() -> None:
    classes = _every_error_class()
    assert {_errors.SkillIOError, ToolCallError, CommandFailed} <= classes
    for cls in classes - {CommandFailed, ToolCallError}:  # these two take theirs per call
        assert cls.code in _errors.ERROR_CODES, cls


@pytest.mark.parametrize("code", _errors.ERROR_CODES)
def test_every_surface_maps_every_code(code: str) -> None:
    mcp_errors = pytest.importorskip("skillpack.mcp._errors")
    assert code in EXIT_CODES
    assert code in RPC_NUMBERS
    assert code in mcp_errors.JSONRPC_CODES
    exc = ToolCallError(code, "x")  # type: ignore[arg-type]
    assert failure(exc)["error"]["code"] == code
    assert error_object(exc)["data"]["code"] == code
    assert code_for(exc) == RPC_NUMBERS[code]
    assert mcp_errors.to_mcp_error(exc).data["code"] == code


def test_the_surfaces_map_no_code_that_does_not_exist() -> None:
    mcp_errors = pytest.importorskip("skillpack.mcp._errors")
    codes = set(_errors.ERROR_CODES)
    assert set(EXIT_CODES) == codes
    assert set(RPC_NUMBERS) == codes
    assert set(mcp_errors.JSONRPC_CODES) == codes


def test_an_io_error_is_io_error_in_the_tools_the_cli_and_both_servers() -> None:
    exc = _errors.SkillIOError("gone")
    assert exc.code == "IO_ERROR"
    assert failure(exc)["error"]["code"] == "IO_ERROR"
    assert error_object(exc)["data"]["code"] == "IO_ERROR"


def test_candidates_is_the_one_attribute_for_ids_to_use_instead() -> None:
    missing = _errors.SkillNotFoundError("no", candidates=["alpha"])
    tied = _errors.AmbiguousSkillError("two", candidates=["a:x", "b:x"])
    assert missing.candidates == ("alpha",) and tied.candidates == ("a:x", "b:x")
    assert failure(missing)["error"]["candidates"] == ["alpha"]
    assert error_object(tied)["data"]["candidates"] == ["a:x", "b:x"]
    assert not hasattr(missing, "suggestions")
