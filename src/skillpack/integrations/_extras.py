"""An adapter's framework is an optional extra: the ImportError names the install."""

from __future__ import annotations


def missing_extra(extra: str, exc: ImportError) -> ImportError:
    """The ImportError to raise when extra `extra`'s framework does not import."""
    error = ImportError(
        f"skillpack.integrations needs {exc.name or 'a package'} for this framework, "
        f"which did not import ({exc}); run pip install 'skillpack[{extra}]'."
    )
    error.name = exc.name
    return error
