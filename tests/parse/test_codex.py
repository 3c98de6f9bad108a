"""Codex's agents/openai.yaml: valid files, broken YAML and wrong types fail open."""

from __future__ import annotations

import pytest

from skillpack._model import CodexMetadata, CodexPermissions
from skillpack.parse._codex import parse_codex_metadata

W = "warning"


def test_codex_metadata_valid() -> None:
    codex, problems = parse_codex_metadata(
        "interface:\n  display_name: My Skill\n  icon_small: ./i.png\n"
        "dependencies:\n  tools:\n    - type: env_var\n      value: API_KEY\n"
        "policy:\n  allow_implicit_invocation: false\n",
        path="/s/agents/openai.yaml",
    )
    assert problems == ()
    assert codex == CodexMetadata(
        interface={"display_name": "My Skill", "icon_small": "./i.png"},
        tool_dependencies=({"type": "env_var", "value": "API_KEY"},),
        allow_implicit_invocation=False,
    )


def test_codex_metadata_broken_yaml_is_a_warning_and_none() -> None:
    codex, problems = parse_codex_metadata("interface: [oops\n", path="/s/agents/openai.yaml")
    assert codex is None
    assert [(p.code, p.severity, p.path) for p in problems] == [
        ("codex-yaml-invalid", W, "/s/agents/openai.yaml")
    ]


@pytest.mark.parametrize(
    ("text", "expected", "warnings"),
    [
        pytest.param("", None, 0, id="empty"),
        pytest.param("- a\n", None, 1, id="list"),
        pytest.param("interface: text\n", CodexMetadata(), 1, id="interface-not-mapping"),
        pytest.param("dependencies: [a]\n", CodexMetadata(), 1, id="dependencies-not-mapping"),
        pytest.param("dependencies:\n  tools: x\n", CodexMetadata(), 1, id="tools-not-list"),
        pytest.param(
            "dependencies:\n  tools: [x, {type: mcp, value: srv}]\n",
            CodexMetadata(tool_dependencies=({"type": "mcp", "value": "srv"},)),
            1,
            id="tool-entry-not-mapping",
        ),
        pytest.param("policy: off\n", CodexMetadata(), 1, id="policy-not-mapping"),
        pytest.param(
            "policy:\n  allow_implicit_invocation: 'no'\n",
            CodexMetadata(allow_implicit_invocation=False),
            1,
            id="quoted-bool",
        ),
        pytest.param(
            # YAML 1.2, which Codex reads: a plain `no` is text too, so it is reported.
            "policy:\n  allow_implicit_invocation: no\n",
            CodexMetadata(allow_implicit_invocation=False),
            1,
            id="yaml-1-1-bool-word",
        ),
        pytest.param(
            "policy:\n  allow_implicit_invocation: 7\n", CodexMetadata(), 1, id="number-policy"
        ),
        pytest.param("!!python/object:x {}\n", None, 1, id="tag"),
    ],
)
def test_codex_metadata_wrong_types_fail_open(
    text: str, expected: CodexMetadata | None, warnings: int
) -> None:
    codex, problems = parse_codex_metadata(text, path="/s/agents/openai.yaml")
    assert codex == expected
    assert len(problems) == warnings
    assert all(p.code == "codex-yaml-invalid" and p.severity == W for p in problems)


def test_a_permissions_profile_is_kept_typed() -> None:
    codex, problems = parse_codex_metadata(
        "permissions:\n"
        "  network:\n    enabled: true\n    allowed_domains: [api.example.com]\n"
        "    denied_domains: [evil.example.com]\n"
        "  file_system:\n    read: [./data]\n    write: [./out, /tmp/x]\n"
        "  macos:\n    preferences: read_only\n",
        path="/s/agents/openai.yaml",
    )
    assert problems == ()
    assert codex == CodexMetadata(
        permissions=CodexPermissions(
            network=True,
            allowed_domains=("api.example.com",),
            denied_domains=("evil.example.com",),
            read=("./data",),
            write=("./out", "/tmp/x"),
            other={"macos": {"preferences": "read_only"}},
        )
    )
    assert codex.permissions is not None
    assert CodexPermissions.from_dict(codex.permissions.to_dict()) == codex.permissions


@pytest.mark.parametrize(
    ("text", "expected", "warnings"),
    [
        pytest.param("permissions: yes\n", None, 1, id="not-a-mapping"),
        pytest.param("permissions:\n", None, 0, id="empty"),
        pytest.param(
            "permissions:\n  network: on\n", CodexPermissions(), 1, id="network-not-mapping"
        ),
        pytest.param(
            "permissions:\n  network: {enabled: maybe}\n",
            CodexPermissions(),
            1,
            id="enabled-not-boolean",
        ),
        pytest.param(
            "permissions:\n  file_system: {write: ./out}\n",
            CodexPermissions(write=("./out",)),
            1,
            id="text-read-as-a-list",
        ),
        pytest.param(
            "permissions:\n  file_system: {read: [./a, 3, {x: 1}]}\n",
            CodexPermissions(read=("./a",)),
            1,
            id="entries-not-text",
        ),
        pytest.param(
            "permissions:\n  file_system: {read: 7}\n",
            CodexPermissions(),
            1,
            id="list-not-a-list",
        ),
        pytest.param(
            "permissions:\n  network: {enabled: false, proxy: x}\n",
            CodexPermissions(network=False),
            1,
            id="unknown-key",
        ),
    ],
)
def test_a_wrong_permissions_part_is_a_warning_and_left_out(
    text: str, expected: CodexPermissions | None, warnings: int
) -> None:
    codex, problems = parse_codex_metadata(text, path="/s/agents/openai.yaml")
    assert codex is not None
    assert codex.permissions == expected
    assert len(problems) == warnings
    assert all(p.code == "codex-yaml-invalid" for p in problems)
