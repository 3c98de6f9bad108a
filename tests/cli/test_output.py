"""Writing JSON documents (`cli/_output.py`): a kept document reaches stdout byte for
byte as the rendering run wrote it, whichever way it is copied."""

from __future__ import annotations

import io
import sys

import pytest

from skillpack.cli._output import emit_json_bytes, emit_json_text

DOCUMENT = '{"skills": [{"name": "caf\\u00e9"}], "problems": []}'


def _written(monkeypatch: pytest.MonkeyPatch, encoding: str, kept: bool) -> bytes:
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding, newline="")
    monkeypatch.setattr(sys, "stdout", stream)
    stream.write("before ")  # text still in the layer's buffer must come first
    if kept:
        emit_json_bytes(DOCUMENT.encode())
    else:
        emit_json_text(DOCUMENT)
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue()


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", "latin-1"])
def test_a_kept_document_is_written_as_the_text_would_be(
    monkeypatch: pytest.MonkeyPatch, encoding: str
) -> None:
    kept = _written(monkeypatch, encoding, kept=True)
    assert kept == _written(monkeypatch, encoding, kept=False)
    assert kept == f"before {DOCUMENT}\n".encode(encoding)


def test_a_stdout_without_a_byte_stream_gets_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    emit_json_bytes(DOCUMENT.encode())
    assert stream.getvalue() == DOCUMENT + "\n"
