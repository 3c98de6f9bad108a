"""`skillpack eval --model`: trigger queries run against a real model.

The model gets what an agent built on skillpack gets: the session's catalog in the
system prompt (`Session.catalog_prompt`), the skill tools in its provider's format
(`SkillTools.definitions_for`), and the query as the user's message. A run triggers
the skill when the model's first loading call loads it: `skill_load` or `use_skill`
naming it, or `skill_read_file` of its SKILL.md. `skill_search` calls are answered
with the real tool (up to `MAX_STEPS` model calls); a reply with no tool call, or
another tool, ends the run untriggered (skill-creator's rule: the first tool use
decides).

Providers go through their own SDKs (`openai`, `anthropic`: the `eval` extra), whose
retries with backoff cover rate limits (429), server errors (5xx), timeouts and
dropped connections; a run still failing after them counts as not triggered and as
an error. A refused key, an unknown model or a refused request stops the whole eval
(`EvalAborted`), which keeps the runs already done.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import SkillpackError, UsageError
from .._model import Skill
from ..select._evals import DEFAULT_RUNS, DEFAULT_THRESHOLD, QueryRun, TriggerQuery, TriggerRun

if TYPE_CHECKING:
    from ._eval import Progress
    from ._session import Session
    from ._tools import SkillTools, ToolFormat

PROVIDERS = ("openai", "anthropic")
KEY_VARIABLES: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""Where each provider's key is read (the SDKs' own variables)."""

MAX_STEPS = 3
"""Model calls per run at most: searches answered before a load decides."""
MAX_TOKENS = 1024
"""`max_tokens` of an Anthropic call (required there): a tool call needs few."""
TASK_MAX_TOKENS = 8192
"""`max_tokens` of an Anthropic task or grading reply."""
DEFAULT_WORKERS = 4
DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 60.0

SYSTEM_PROMPT = (
    "You are a coding agent. Skills extend what you can do: when one fits the "
    "user's request, load it with a tool before you answer.\n\n"
)
"""Put before the catalog in the system prompt."""

LOADING_TOOLS = ("skill_load", "use_skill", "skill_read_file")


class EvalProviderError(SkillpackError):
    """The provider refused the eval itself (bad key, unknown model, bad request)."""

    code = "EXECUTION_ERROR"


class EvalAborted(SkillpackError):
    """The eval stopped early; `runs` holds every skill's result so far."""

    code = "EXECUTION_ERROR"

    def __init__(self, message: str, runs: Sequence[TriggerRun]) -> None:
        super().__init__(message)
        self.runs = tuple(runs)


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """`--model PROVIDER:MODEL` and how to reach it."""

    provider: str
    model: str
    base_url: str | None = None
    runs: int = DEFAULT_RUNS
    threshold: float = DEFAULT_THRESHOLD
    workers: int = DEFAULT_WORKERS
    retries: int = DEFAULT_RETRIES
    timeout: float = DEFAULT_TIMEOUT

    @property
    def label(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_model(text: str) -> tuple[str, str]:
    """`openai:gpt-4.1` -> (`openai`, `gpt-4.1`).

    Raises:
        UsageError: no provider, or one skillpack does not speak.
    """
    provider, sep, model = text.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise UsageError(
            f"--model {text!r}: write PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (an OpenAI-compatible server is openai: with --base-url)."
        )
    return provider, model


def api_key(provider: str, env: Mapping[str, str], *, base_url: str | None) -> str:
    """The provider's key from its usual variable; a local server (`--base-url`) may
    do without one.

    Raises:
        UsageError: no key and no `--base-url`.
    """
    variable = KEY_VARIABLES[provider]
    key = env.get(variable, "")
    if key:
        return key
    if base_url is not None:
        return "none"
    raise UsageError(f"Set {variable} to run against {provider} (or use --base-url).")


# -- one run ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, slots=True)
class _Call:
    name: str
    arguments: Mapping[str, Any]
    id: str


class ProviderChat:
    """One provider's conversation turns, through its SDK."""

    def __init__(self, spec: ModelSpec, key: str, tools: SkillTools) -> None:
        self.spec = spec
        self.tools = tools
        fmt: ToolFormat = "anthropic" if spec.provider == "anthropic" else "openai"
        self.definitions = tools.definitions_for(fmt)
        self.system = SYSTEM_PROMPT + tools.session.catalog_prompt()
        options: dict[str, Any] = {
            "api_key": key,
            "max_retries": spec.retries,
            "timeout": spec.timeout,
        }
        if spec.base_url is not None:
            options["base_url"] = spec.base_url
        if spec.provider == "anthropic":
            import anthropic

            self.sdk: Any = anthropic
            self.client: Any = anthropic.Anthropic(**options)
        else:
            import openai

            self.sdk = openai
            self.client = openai.OpenAI(**options)

    def complete(self, system: str, user: str) -> tuple[str, int]:
        """One reply in words, no tools: its text and the tokens it cost."""
        if self.spec.provider == "anthropic":
            extra = {"system": system} if system else {}
            reply = self.client.messages.create(
                model=self.spec.model,
                max_tokens=TASK_MAX_TOKENS,
                messages=[{"role": "user", "content": user}],
                **extra,
            )
            text = "".join(b.text for b in reply.content if b.type == "text")
            usage = reply.usage
            return text, int(usage.input_tokens + usage.output_tokens) if usage else 0
        messages = [{"role": "system", "content": system}] if system else []
        reply = self.client.chat.completions.create(
            model=self.spec.model, messages=[*messages, {"role": "user", "content": user}]
        )
        usage = reply.usage
        return reply.choices[0].message.content or "", int(usage.total_tokens) if usage else 0

    def decide(self, query: str) -> tuple[str, ...]:
        """The skill refs the run loaded (the deciding one; empty: none)."""
        if self.spec.provider == "anthropic":
            return self._anthropic(query)
        return self._openai(query)

    def _openai(self, query: str) -> tuple[str, ...]:
        messages: list[Any] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": query},
        ]
        for _step in range(MAX_STEPS):
            reply = self.client.chat.completions.create(
                model=self.spec.model, messages=messages, tools=self.definitions
            )
            message = reply.choices[0].message
            calls = [
                _Call(name=c.function.name, arguments=_arguments(c.function.arguments), id=c.id)
                for c in message.tool_calls or ()
            ]
            decided = self._decided(calls)
            if decided is not None:
                return decided
            messages.append(message.model_dump(exclude_none=True))
            for call in calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": self._answer(call)}
                )
        return ()

    def _anthropic(self, query: str) -> tuple[str, ...]:
        messages: list[Any] = [{"role": "user", "content": query}]
        for _step in range(MAX_STEPS):
            reply = self.client.messages.create(
                model=self.spec.model,
                max_tokens=MAX_TOKENS,
                system=self.system,
                tools=self.definitions,
                messages=messages,
            )
            calls = [
                _Call(name=b.name, arguments=dict(b.input or {}), id=b.id)
                for b in reply.content
                if b.type == "tool_use"
            ]
            decided = self._decided(calls)
            if decided is not None:
                return decided
            messages.append(
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in reply.content],
                }
            )
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": c.id, "content": self._answer(c)}
                        for c in calls
                    ],
                }
            )
        return ()

    def _decided(self, calls: Sequence[_Call]) -> tuple[str, ...] | None:
        """What the calls decide: the loaded ref, nothing (no call, or a tool that
        loads no skill), or None when they only search (answer and go on)."""
        if not calls:
            return ()
        for call in calls:
            if call.name in LOADING_TOOLS:
                ref = _loaded_ref(call)
                return (ref,) if ref else ()
        if all(call.name == "skill_search" for call in calls):
            return None
        return ()

    def _answer(self, call: _Call) -> str:
        return json.dumps(self.tools.call(call.name, call.arguments))


def _arguments(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _loaded_ref(call: _Call) -> str | None:
    args = call.arguments
    if call.name == "skill_load":
        ref = args.get("path") or args.get("name")
    elif call.name == "use_skill":
        ref = args.get("skill")
    else:
        path = str(args.get("path") or "").replace("\\", "/").lstrip("./")
        ref = args.get("skill") if path.upper() == "SKILL.MD" else None
    return ref if isinstance(ref, str) and ref else None


# -- the eval -----------------------------------------------------------------------------


def model_trigger_runs(
    session: Session,
    plan: Sequence[tuple[Skill, Sequence[TriggerQuery]]],
    spec: ModelSpec,
    *,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[TriggerRun]:
    """Run each skill's queries `spec.runs` times against the model, `spec.workers`
    at a time.

    Raises:
        UsageError: no key.
        EvalAborted: the provider refused the eval (bad key, unknown model); it holds
            every skill's runs done so far (`complete` false).
    """
    from ._eval import skill_id
    from ._tools import SkillTools
    from ._workspace import lookup_skill

    key = api_key(spec.provider, os.environ if env is None else env, base_url=spec.base_url)
    chat = ProviderChat(spec, key, SkillTools(session))
    sdk = chat.sdk
    stop = threading.Event()
    failure: list[str] = []
    lock = threading.Lock()
    outcomes: dict[tuple[int, int], list[tuple[tuple[str, ...], bool]]] = {}
    jobs = [
        (i, j, query)
        for i, (_skill, queries) in enumerate(plan)
        for j, query in enumerate(queries)
        for _run in range(spec.runs)
    ]
    done = 0
    ids: dict[str, str] = {}

    def shown(ref: str) -> str:
        if ref not in ids:
            try:
                ids[ref] = skill_id(session, lookup_skill(session.catalog, ref))
            except SkillpackError:
                ids[ref] = ref
        return ids[ref]

    def one(job: tuple[int, int, TriggerQuery]) -> None:
        nonlocal done
        i, j, query = job
        if stop.is_set():
            return
        failed = False
        try:
            picked = tuple(shown(ref) for ref in chat.decide(query.query))
        except (sdk.APIStatusError, sdk.APITimeoutError, sdk.APIConnectionError) as exc:
            fatal, message = failure_of(exc, spec, sdk, f"on {query.query!r}")
            if fatal:
                with lock:
                    failure.append(message)
                stop.set()
                return
            picked, failed = (), True
            _warn(warn, f"{message}; counted as not triggered")
        with lock:
            outcomes.setdefault((i, j), []).append((picked, failed))
            done += 1
            count = done
        if progress is not None:
            progress(count, len(jobs), query.query)

    with ThreadPoolExecutor(max_workers=max(1, spec.workers)) as pool:
        list(pool.map(one, jobs))

    runs = []
    for i, (skill, queries) in enumerate(plan):
        me = skill_id(session, skill)
        results = []
        for j, query in enumerate(queries):
            got = outcomes.get((i, j), [])
            if not got:
                continue
            results.append(
                QueryRun(
                    query=query,
                    triggers=sum(1 for picked, _f in got if picked and picked[0] == me),
                    runs=len(got),
                    picked=tuple(picked for picked, _f in got),
                    errors=sum(1 for _p, failed in got if failed),
                )
            )
        runs.append(
            TriggerRun(
                skill_name=skill.name,
                skill_id=me,
                skill_path=skill.path,
                description=skill.description,
                digest=session.skills.digest(skill),
                results=tuple(results),
                mode=spec.label,
                threshold=spec.threshold,
                complete=not failure,
            )
        )
    if failure:
        raise EvalAborted(failure[0], runs)
    return runs


FATAL_STATUS = (400, 401, 403, 404, 422)
"""Statuses that stop the eval: every later call would get them too."""


def failure_of(exc: Exception, spec: ModelSpec, sdk: Any, where: str) -> tuple[bool, str]:
    """(stops the eval, the message) of an SDK error that outlived its retries."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, sdk.APIStatusError) and status in FATAL_STATUS:
        return True, _fatal_message(spec, status, str(exc))
    if isinstance(exc, sdk.APIStatusError):
        return (
            False,
            f"{spec.label}: {_status_text(status or 0)} after {spec.retries} retries {where}",
        )
    if isinstance(exc, sdk.APITimeoutError):
        return False, (
            f"{spec.label}: no answer within {spec.timeout:g} s after {spec.retries} retries "
            f"{where}"
        )
    return False, f"{spec.label}: cannot connect ({exc}) {where}"


def _warn(warn: Callable[[str], None] | None, message: str) -> None:
    if warn is not None:
        warn(message)


def _status_text(status: int) -> str:
    return "rate limited (429)" if status == 429 else f"server error ({status})"


def _fatal_message(spec: ModelSpec, status: int, detail: str) -> str:
    variable = KEY_VARIABLES[spec.provider]
    why = {
        401: f"the key was refused (401): check {variable}",
        403: f"the key may not use this model (403): check {variable} and the model name",
        404: f"no model {spec.model!r} there (404): check --model and --base-url",
    }.get(status, f"the request was refused ({status}): {detail}")
    return f"{spec.label}: {why}. The eval stopped; the runs already done are kept."
