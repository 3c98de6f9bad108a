"""`[[mcp_servers]]` entries skillpack connects to: those with a `url` or a `command`."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from skillpack.config._files import set_skill_enabled, user_config_path
from skillpack.config._schema import McpServerConfig, merge_layers, parse_config

SERVERS = """
[[mcp_servers]]
name = "docs"
command = "docs-server"
args = ["--stdio"]
env = { DOCS_TOKEN = "t" }
cwd = "work"

[[mcp_servers]]
name = "web_2"
url = "https://example.com/mcp"
token_file = "~/.web-token"
timeout = 5
transport = "streamable_http"

[[mcp_servers]]
name = "argv"
command = ["npx", "-y", "some-server"]
args = ["--verbose"]

[[mcp_servers]]
name = "github"
"""


def test_servers_with_a_url_or_command_are_hosts_with_paths_resolved(
    tmp_path: Path, isolated_home: Path
) -> None:
    layer, problems = parse_config(SERVERS, path="/x/config.toml", base=tmp_path)
    assert problems == ()
    config = merge_layers([layer])
    assert [s["name"] for s in config.mcp_servers] == ["docs", "web_2", "argv", "github"]
    assert config.mcp_hosts == (
        McpServerConfig(
            name="docs",
            command="docs-server",
            args=("--stdio",),
            env={"DOCS_TOKEN": "t"},
            cwd=str(tmp_path / "work"),
        ),
        McpServerConfig(
            name="web_2",
            url="https://example.com/mcp",
            token_file=str(isolated_home / ".web-token"),
            timeout=5.0,
        ),
        McpServerConfig(name="argv", command="npx", args=("-y", "some-server", "--verbose")),
    )


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('name = "a b"\ncommand = "x"', "`name` is 1-64 letters"),
        ('name = "a"\ncommand = "x"\nurl = "http://h/mcp"', "either `command`"),
        ('name = "a"\nurl = "ftp://h"', "starts with http:// or https://"),
        ('name = "a"\ncommand = "x"\nargs = "--y"', "`args` is an array of strings"),
        ('name = "a"\ncommand = []', "non-empty array of strings"),
        ('name = "a"\ncommand = "x"\nenv = { K = 1 }', "`env` is a table of strings"),
        ('name = "a"\ncommand = "x"\ntoken_file = "t"', "`token_file` only beside `url`"),
        ('name = "a"\ncommand = "x"\ntimeout = 0', "positive number of seconds"),
    ],
)
def test_a_host_entry_that_cannot_be_used_is_an_error_naming_the_fix(entry: str, says: str) -> None:
    layer, problems = parse_config(f"[[mcp_servers]]\n{entry}\n", path="c.toml", base="/")
    (problem,) = problems
    assert problem.code == "config-value-invalid"
    assert problem.field == "mcp_servers"
    assert says in problem.message
    config = merge_layers([layer])
    assert len(config.mcp_servers) == 1 and config.mcp_hosts == ()


def test_rewriting_the_config_keeps_the_servers(isolated_home: Path) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SERVERS, encoding="utf-8")
    set_skill_enabled("pdf", False)
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert document["mcp_servers"] == tomllib.loads(SERVERS)["mcp_servers"]
    assert document["skills"]["disabled"] == ["pdf"]
