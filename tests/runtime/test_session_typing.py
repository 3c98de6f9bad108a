"""`Session.open` is typed keyword by keyword: a misspelt keyword fails at run time and
in `mypy --strict` (the mypy run of CI checks this file: each `type: ignore` below
must be needed, or `warn_unused_ignores` fails the run). The same holds for the names
that moved off `Session`: typed code is told, old code still runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillpack._errors import UsageError
from skillpack.runtime._session import Session


def test_a_misspelt_keyword_of_session_open_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="refersh"):
        Session.open(cwd=str(tmp_path), refersh="watch")  # type: ignore[call-arg]


def test_a_keyword_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown refresh|refresh"):
        Session.open(cwd=str(tmp_path), roots=[str(tmp_path)], refresh="sometimes")  # type: ignore[arg-type]


def test_a_moved_name_is_a_type_error_and_a_warning_at_run_time() -> None:
    from skillpack._model import Catalog

    session = Session(Catalog())
    with pytest.warns(DeprecationWarning):
        assert session.model_skills() == ()  # type: ignore[attr-defined]


def test_session_open_takes_every_keyword_of_session_but_what_it_decides() -> None:
    import inspect

    made = set(inspect.signature(Session.__init__).parameters) - {"self", "catalog"}
    taken = set(inspect.signature(Session.open).parameters)
    assert made - taken == {"config", "loader", "source"}  # the workspace decides these
