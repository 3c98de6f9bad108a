"""A small, complete agent loop that uses skillpack's catalog and tools.

The loop is provider-neutral: a `Model` takes the conversation and the tool
definitions and replies with text and/or tool calls. Three models are provided:

- `ScriptedModel`: a deterministic stand-in that runs offline (used by the tests):
  it searches for a skill, loads the best hit, reads one of its files, and answers
  from what it read.
- `OpenAIModel`: OpenAI chat completions (`pip install 'skillpack[openai]'`).
- `AnthropicModel`: Anthropic messages (`pip install 'skillpack[anthropic]'`).

Run it::

    python examples/agent_loop.py "review a third-party skill before I install it"
    python examples/agent_loop.py --provider openai --model gpt-4.1 "…"
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from skillpack import Session, SkillTools


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Reply:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class Model(Protocol):
    def respond(self, messages: Sequence[dict[str, Any]], tools: Sequence[Any]) -> Reply: ...

    tool_format: str
    """Which `SkillTools.definitions_for` format this model wants."""


@dataclass(kw_only=True)
class Transcript:
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    answer: str = ""


SYSTEM = "You are a coding assistant. Skills give you task-specific instructions.\n\n{catalog}"


def run_agent(
    session: Session,
    model: Model,
    user_text: str,
    *,
    context_window: int = 200_000,
    max_steps: int = 8,
) -> Transcript:
    """Run one user request to a final answer, executing skill tool calls."""
    tools = SkillTools(session)
    transcript = Transcript()
    catalog = session.catalog_prompt(context_window=context_window)
    turn = session.prepare_turn(user_text)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM.format(catalog=catalog)},
    ]
    for injection in turn.injections:
        messages.append({"role": "user", "content": injection})
    messages.append({"role": "user", "content": turn.text or user_text})
    definitions = tools.definitions_for(model.tool_format)  # type: ignore[arg-type]
    for _ in range(max_steps):
        reply = model.respond(messages, definitions)
        messages.append(
            {
                "role": "assistant",
                "content": reply.text,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls
                ],
            }
        )
        if not reply.tool_calls:
            transcript.answer = reply.text
            break
        for call in reply.tool_calls:
            result = tools.call(call.name, call.arguments)
            transcript.tool_calls.append((call.name, call.arguments, result))
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
            )
    transcript.messages = messages
    return transcript


# -- the offline, scripted model -----------------------------------------------------

Step = Callable[[Sequence[dict[str, Any]]], Reply]


def _last_tool_result(messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    for message in reversed(messages):
        if message["role"] == "tool":
            result: dict[str, Any] = json.loads(message["content"])
            return result
    raise RuntimeError("the script expected a tool result before this step")


class ScriptedModel:
    """Search → load the top hit → read one of its files → answer from it."""

    tool_format = "openai"

    def __init__(self, query: str, *, file_hint: str = "references/") -> None:
        self.query = query
        self.file_hint = file_hint
        self.step = 0
        self.saw_catalog = False
        self.loaded: str | None = None

    def respond(self, messages: Sequence[dict[str, Any]], tools: Sequence[Any]) -> Reply:
        self.step += 1
        if self.step == 1:
            self.saw_catalog = "<available_skills>" in messages[0]["content"]
            return Reply(
                tool_calls=(ToolCall(id="1", name="skill_search", arguments={"query": self.query}),)
            )
        result = _last_tool_result(messages)
        if not result["ok"]:
            return Reply(text=f"A tool failed: {result['error']['message']}")
        data = result["data"]
        if self.step == 2:
            if not data["results"]:
                return Reply(text="No skill covers this; answering without one.")
            self.loaded = data["results"][0]["path"]
            return Reply(
                tool_calls=(ToolCall(id="2", name="skill_load", arguments={"path": self.loaded}),)
            )
        if self.step == 3:
            listed = [
                line.strip().lstrip("- ")
                for line in data["content"].splitlines()
                if line.strip().lstrip("- ").startswith(self.file_hint)
            ]
            if not listed:
                return Reply(text=f"Loaded {data['name']}; it bundles no {self.file_hint} files.")
            return Reply(
                tool_calls=(
                    ToolCall(
                        id="3",
                        name="skill_read_file",
                        arguments={"skill": self.loaded or data["path"], "path": listed[0]},
                    ),
                )
            )
        first_line = next((line for line in data["content"].splitlines() if line.strip()), "")
        return Reply(
            text=f"Following skill '{data['skill']}', I checked {data['path']} "
            f"(it starts: {first_line.strip()!r})."
        )


# -- real providers (optional extras) --------------------------------------------------


def _require(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SystemExit(
            f"The {module!r} package is needed for this provider: pip install 'skillpack[{extra}]'"
        ) from exc


class OpenAIModel:
    """OpenAI chat completions with function calling."""

    tool_format = "openai"

    def __init__(self, model: str) -> None:
        openai = _require("openai", "openai")
        self.client = openai.OpenAI()
        self.model = model

    def respond(self, messages: Sequence[dict[str, Any]], tools: Sequence[Any]) -> Reply:
        wire = []
        for m in messages:
            if m["role"] == "assistant":
                wire.append(
                    {
                        "role": "assistant",
                        "content": m["content"] or None,
                        **(
                            {
                                "tool_calls": [
                                    {
                                        "id": c["id"],
                                        "type": "function",
                                        "function": {
                                            "name": c["name"],
                                            "arguments": json.dumps(c["arguments"]),
                                        },
                                    }
                                    for c in m["tool_calls"]
                                ]
                            }
                            if m["tool_calls"]
                            else {}
                        ),
                    }
                )
            else:
                wire.append(m)
        response = self.client.chat.completions.create(
            model=self.model, messages=wire, tools=list(tools)
        )
        message = response.choices[0].message
        calls = tuple(
            ToolCall(
                id=c.id, name=c.function.name, arguments=json.loads(c.function.arguments or "{}")
            )
            for c in (message.tool_calls or [])
        )
        return Reply(text=message.content or "", tool_calls=calls)


class AnthropicModel:
    """Anthropic messages with tool use."""

    tool_format = "anthropic"

    def __init__(self, model: str) -> None:
        anthropic = _require("anthropic", "anthropic")
        self.client = anthropic.Anthropic()
        self.model = model

    def respond(self, messages: Sequence[dict[str, Any]], tools: Sequence[Any]) -> Reply:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        wire: list[dict[str, Any]] = []
        for m in messages:
            if m["role"] == "user":
                wire.append({"role": "user", "content": m["content"]})
            elif m["role"] == "assistant":
                blocks: list[dict[str, Any]] = []
                if m["content"]:
                    blocks.append({"type": "text", "text": m["content"]})
                blocks += [
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                    for c in m["tool_calls"]
                ]
                wire.append({"role": "assistant", "content": blocks})
            elif m["role"] == "tool":
                wire.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": m["tool_call_id"],
                                "content": m["content"],
                            }
                        ],
                    }
                )
        response = self.client.messages.create(
            model=self.model, max_tokens=2048, system=system, messages=wire, tools=list(tools)
        )
        text = "".join(b.text for b in response.content if b.type == "text")
        calls = tuple(
            ToolCall(id=b.id, name=b.name, arguments=dict(b.input))
            for b in response.content
            if b.type == "tool_use"
        )
        return Reply(text=text, tool_calls=calls)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request")
    parser.add_argument(
        "--provider", choices=["scripted", "openai", "anthropic"], default="scripted"
    )
    parser.add_argument("--model", default="")
    parser.add_argument("--root", action="append", default=[])
    options = parser.parse_args(argv)
    session = Session.open(extra_roots=options.root)
    model: Model
    if options.provider == "openai":
        model = OpenAIModel(options.model or "gpt-4.1")
    elif options.provider == "anthropic":
        model = AnthropicModel(options.model or "claude-sonnet-4-5")
    else:
        model = ScriptedModel(options.request)
    transcript = run_agent(session, model, options.request)
    for name, arguments, result in transcript.tool_calls:
        status = "ok" if result["ok"] else result["error"]["code"]
        print(f"→ {name}({json.dumps(arguments)}) {status}")
    print(transcript.answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
