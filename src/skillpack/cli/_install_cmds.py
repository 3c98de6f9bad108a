"""`skillpack install`, `update`, `remove`, `doctor`, `publish` and `audit`.

Exit codes: 0 done; 1 something was refused or declined, drift (`doctor`) or a
high-severity finding (`audit`); 2 the command line is wrong. With `--json`, an
outcome that failed prints its usual document plus `"error": {"code", "message"}`
(`REFUSED`, `APPROVAL_REQUIRED`, `DRIFT`, `AUDIT_HIGH`); an exception is the group's
one JSON error (`cli/_errors.py`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from .. import _errors as errors
from ._errors import error_fields
from ._oci_opts import insecure_option as _insecure_option
from ._oci_opts import oci_options as _oci_options
from ._oci_opts import read_key
from ._oci_opts import verify_key_option as _verify_key_option
from ._output import console, emit_json, visible

if TYPE_CHECKING:
    from ..install._audit import Finding
    from ..install._installer import Outcome
    from ..install._plan import Plan


_project_option = click.option(
    "--project",
    is_flag=True,
    help="The project's .agents/skills and skills-lock.json instead of ~/.agents/skills.",
)
_yes_option = click.option(
    "--yes", "-y", is_flag=True, help="Approve without asking (the plan is still printed)."
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (stable shape).")
_timeout_option = click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds to wait for a server (connecting, or between bytes) before retrying.",
)
_cwd_option = click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    default=None,
    help="Directory that relative paths and the project root are taken from.",
)


@click.command("install")
@click.argument("source", required=False)
@click.option(
    "--skill",
    "skills",
    multiple=True,
    metavar="NAME",
    help="Install this skill of SOURCE; repeatable.",
)
@click.option("--all", "all_skills", is_flag=True, help="Install every skill SOURCE offers.")
@click.option(
    "--system",
    is_flag=True,
    help="Copy the skills bundled with skillpack into ~/.agents/skills, so that "
    "other agents see them.",
)
@_project_option
@_yes_option
@_timeout_option
@_insecure_option
@_verify_key_option
@_cwd_option
@_json_option
def install_command(
    source: str | None,
    skills: tuple[str, ...],
    all_skills: bool,
    system: bool,
    project: bool,
    yes: bool,
    timeout: float,
    insecure: tuple[str, ...],
    verify_key: str | None,
    cwd: str | None,
    as_json: bool,
) -> None:
    """Install skills from SOURCE after showing what they are and an audit.

    SOURCE is a site (https://host[/base], read at /.well-known/agent-skills/index.json),
    a git repository (owner/repo, https://host/repo.git, with optional /sub/path and
    #ref), an archive (.zip, .tar.gz; a path or a URL), an OCI artifact
    (oci://REGISTRY/REPO[:TAG|@DIGEST]: agentskills, Flux, ToolHive or ramalama
    layouts, pinned by digest in the lock) or a local folder. Every download is
    verified against its digests; nothing is written before approval.
    """
    from ..install._installer import install, install_system

    if system:
        if source or project or skills or all_skills:
            raise errors.UsageError("--system takes no SOURCE, --skill, --all or --project.")
        outcome = install_system(approve=_approver(yes, as_json))
    else:
        if not source:
            raise errors.UsageError("Give a SOURCE to install from (or --system).")
        with _progress(as_json) as progress:
            outcome = install(
                source,
                skills=skills,
                all_skills=all_skills,
                oci=_oci_options(insecure, verify_key),
                **_change_options(project, cwd, yes, timeout, as_json, progress),
            )
    _report(outcome, as_json)


@click.command("update")
@click.argument("names", nargs=-1)
@_project_option
@_yes_option
@_timeout_option
@_insecure_option
@_verify_key_option
@_cwd_option
@_json_option
def update_command(
    names: tuple[str, ...],
    project: bool,
    yes: bool,
    timeout: float,
    insecure: tuple[str, ...],
    verify_key: str | None,
    cwd: str | None,
    as_json: bool,
) -> None:
    """Re-resolve installed skills (all, or NAMES) and install what changed.

    Changes are shown by digest (and file by file; OCI skills also by manifest
    digest, their tag re-resolved), unchanged skills are skipped, and a skill whose
    files you edited is never overwritten.
    """
    from ..install._installer import update

    with _progress(as_json) as progress:
        outcome = update(
            names,
            oci=_oci_options(insecure, verify_key),
            **_change_options(project, cwd, yes, timeout, as_json, progress),
        )
    _report(outcome, as_json)


@click.command("remove")
@click.argument("names", nargs=-1, required=True)
@_project_option
@_cwd_option
@_json_option
def remove_command(names: tuple[str, ...], project: bool, cwd: str | None, as_json: bool) -> None:
    """Delete installed skills and their lock entries."""
    from ..install._installer import remove

    outcome = remove(names, scope="project" if project else "user", cwd=cwd)
    _report(outcome, as_json)


@click.command("doctor")
@_project_option
@_cwd_option
@_json_option
def doctor_command(project: bool, cwd: str | None, as_json: bool) -> None:
    """Check installed skills against the lock file: modified, missing and extra files,
    and skills the lock does not record. Exit 1 on any drift."""
    from ..install._doctor import doctor

    report = doctor(scope="project" if project else "user", cwd=cwd)
    if as_json:
        drift = error_fields("DRIFT", "Installed skills differ from the lock file.")
        _emit(report.to_dict(), None if report.clean else drift)
    else:
        out = console()
        _print_recovered(out, report.recovered)
        for entry in report.entries:
            style = "green" if entry.status == "ok" else "red"
            line = f"[{style}]{entry.status:<9}[/{style}] {_clean(entry.name)}"
            if entry.source:
                line += f"  [dim]{_clean(entry.source)}[/dim]"
            out.print(line)
            for label, paths in (
                ("modified", entry.modified),
                ("missing", entry.missing),
                ("extra", entry.extra),
            ):
                for path in paths:
                    out.print(f"    {label}: {_clean(path)}")
            if (
                entry.status != "ok"
                and entry.detail
                and not (entry.modified or entry.missing or entry.extra)
            ):
                out.print(f"    {_clean(entry.detail)}")
        summary = "clean" if report.clean else "drift"
        out.print(
            f"{summary}: {len(report.entries)} skill(s) in {_clean(report.skills_dir)} "
            f"against {_clean(report.lock)}"
        )
    if not report.clean:
        raise SystemExit(1)


@click.command("publish")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(file_okay=False, path_type=str),
    help="Site folder to write .well-known/agent-skills/ into.",
)
@click.option(
    "--oci",
    "oci",
    default=None,
    metavar="REGISTRY/REPO",
    help="Push to this OCI repository instead (agentskills: one artifact per skill at "
    "REPO/<name>; flux: one bundle at REPO).",
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="TAG",
    help="Tag for --oci (repeatable); default the skill's metadata.version, else latest.",
)
@click.option(
    "--format",
    "oci_format",
    type=click.Choice(["agentskills", "flux"]),
    default="agentskills",
    show_default=True,
    help="OCI layout for --oci.",
)
@click.option(
    "--sign-key",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    default=None,
    help="Sign each pushed artifact with this ECDSA P-256 PEM private key (cosign format "
    "signature; COSIGN_PASSWORD decrypts an encrypted key).",
)
@click.option(
    "--insecure", is_flag=True, help="Reach the --oci registry over plain http or unchecked TLS."
)
@_json_option
def publish_command(
    directory: str,
    out: str | None,
    oci: str | None,
    tags: tuple[str, ...],
    oci_format: str,
    sign_key: str | None,
    insecure: bool,
    as_json: bool,
) -> None:
    """Write the skills under DIRECTORY as a well-known tree any static server serves
    (--out), or push them to an OCI registry (--oci).

    The index is the discovery 0.2.0 form (`skills` npm CLI compatible): a skill-md
    entry for a lone SKILL.md, a reproducible .tar.gz otherwise, every file beside it
    with per-file digests. An OCI push is reproducible (the same tree gives the same
    digest) and prints each REGISTRY/REPO:TAG@DIGEST.
    """
    from ..install._publish import publish

    if (out is None) == (oci is None):
        raise errors.UsageError("Give exactly one of --out DIR and --oci REGISTRY/REPO.")
    if oci is None and (tags or sign_key or insecure or oci_format != "agentskills"):
        raise errors.UsageError("--tag, --format, --sign-key and --insecure go with --oci.")
    if oci is not None:
        _publish_oci(directory, oci, tags, oci_format, sign_key, insecure, as_json)
        return
    assert out is not None
    report = publish(directory, out)
    if as_json:
        emit_json(report.to_dict())
        return
    out_console = console()
    for skill in report.skills:
        out_console.print(
            f"[green]{skill.kind:<8}[/green] {_clean(skill.name)}  {_clean(skill.url)}  "
            f"{skill.digest[:19]}…  ({len(skill.files)} file(s))"
        )
    out_console.print(f"wrote {_clean(report.index)}")
    out_console.print(f"serve it with: python -m http.server --directory {_clean(report.out)}")


def _publish_oci(
    directory: str,
    target: str,
    tags: tuple[str, ...],
    oci_format: str,
    sign_key: str | None,
    insecure: bool,
    as_json: bool,
) -> None:
    from ..install._oci_publish import publish_oci

    key = read_key(sign_key)
    report = publish_oci(
        directory,
        target,
        tags=tags,
        format="flux" if oci_format == "flux" else "agentskills",
        insecure=insecure,
        sign_key=key,
    )
    if as_json:
        emit_json(report.to_dict())
        return
    out_console = console()
    for artifact in report.artifacts:
        for ref in artifact.refs():
            out_console.print(_clean(ref))
        for signature in artifact.signatures:
            out_console.print(f"  signed: {_clean(signature)}")


@click.command("audit")
@click.argument("ref")
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=str),
    default=None,
    help="Directory to discover skills from when REF is a name.",
)
@_json_option
def audit_command(ref: str, cwd: str | None, as_json: bool) -> None:
    """Scan a skill (a folder, or an installed skill's NAME) for risky content.

    Findings: remote-code-execution, data-exfiltration, instruction-override,
    safety-bypass, obfuscated-payload, hidden-text, destructive-command, each with a
    severity. Exit 1 when any finding is high.
    """
    from ..install._audit import worst_severity
    from ..install._collect import audit_tree
    from ..install._values import Refused

    path = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(ref)))
    if not os.path.isdir(path):
        path = _installed_dir(ref, cwd)
    try:
        results = audit_tree(path)
    except Refused as refused:
        raise errors.SkillPermissionError(refused.message) from None
    every = tuple(f for _name, _folder, findings in results for f in findings)
    worst = worst_severity(every)
    if as_json:
        data: dict[str, Any] = {
            "skills": [
                {"name": name, "path": folder, "findings": [f.to_dict() for f in findings]}
                for name, folder, findings in results
            ],
            "worst": worst,
        }
        high = error_fields("AUDIT_HIGH", "The audit found high-severity content.")
        _emit(data, high if worst == "high" else None)
    else:
        out = console()
        for name, folder, findings in results:
            out.print(f"[bold]{_clean(name)}[/bold]  [dim]{_clean(folder)}[/dim]")
            _print_findings(out, findings)
    if worst == "high":
        raise SystemExit(1)


def _installed_dir(ref: str, cwd: str | None) -> str:
    from ..runtime._workspace import lookup_skill, open_workspace

    workspace = open_workspace(cwd=cwd)
    return lookup_skill(workspace.catalog, ref).dir


# --- approval and reports -------------------------------------------------------------


def _change_options(
    project: bool,
    cwd: str | None,
    yes: bool,
    timeout: float,
    as_json: bool,
    progress: Callable[[str, int, int | None], None] | None,
) -> dict[str, Any]:
    """The keywords `install` and `update` share, from their common options."""
    from ..install._values import Limits

    return {
        "scope": "project" if project else "user",
        "cwd": cwd,
        "approve": _approver(yes, as_json),
        "limits": Limits(timeout=timeout),
        "progress": progress,
        "waiting": _say_waiting,
    }


def _say_waiting(message: str) -> None:
    """The progress line of a change waiting for the scope's lock (stderr, so --json
    output stays one document)."""
    from .._text import safe_text

    sys.stderr.write(safe_text(message) + "\n")
    sys.stderr.flush()


def _approver(yes: bool, as_json: bool) -> Callable[[Plan], bool]:
    def approve(plan: Plan) -> bool:
        interactive = not yes and sys.stdin.isatty()
        if not as_json or interactive:
            _print_plan(plan, stderr=as_json)
        if yes:
            return True
        if not interactive:
            sys.stderr.write(
                "skillpack: not installed: approval needed. Review the plan above, then run "
                "again with --yes.\n"
            )
            return False
        return click.confirm("Install these skills?", default=False, err=as_json)

    return approve


def _print_plan(plan: Plan, *, stderr: bool) -> None:
    out = console(stderr=stderr)
    out.print(f"[bold]{plan.scope} scope[/bold]: {_clean(plan.skills_dir)}")
    for item in plan.items:
        candidate = item.candidate
        summary = candidate.summary
        out.print(
            f"\n  [bold]{_clean(candidate.name)}[/bold]  [cyan]{item.action}[/cyan]  from "
            f"{_clean(candidate.origin.label())}"
        )
        out.print(f"    {_clean(summary.description)}")
        if item.previous_source:
            out.print(
                f"    source: {_clean(item.previous_source)} -> {_clean(candidate.origin.label())}"
            )
        if item.previous_digest:
            out.print(f"    digest: {item.previous_digest} -> {candidate.skill_digest}")
        else:
            out.print(f"    digest: {candidate.skill_digest}")
        if item.signature:
            out.print(f"    signature: verified with --verify-key ({_clean(item.signature)})")
        if item.changes is not None:
            changes = item.changes
            parts = [f"+{p}" for p in changes.added] + [f"~{p}" for p in changes.changed]
            parts += [f"-{p}" for p in changes.removed]
            out.print(f"    changes: {_clean(' '.join(parts)) or 'none'}")
        files = ", ".join(summary.files[:12]) + (" …" if len(summary.files) > 12 else "")
        out.print(f"    files ({len(summary.files)}, {summary.size} bytes): {_clean(files)}")
        if summary.scripts:
            out.print(f"    scripts: {_clean(', '.join(summary.scripts))}")
        if summary.allowed_tools is not None:
            out.print(f"    allowed-tools: {_clean(' '.join(summary.allowed_tools)) or '(none)'}")
        if summary.hooks:
            out.print(f"    [yellow]hooks[/yellow]: {_clean(', '.join(map(str, summary.hooks)))}")
        if summary.dependencies:
            out.print(f"    dependencies: {_clean(', '.join(summary.dependencies))}")
        _print_findings(out, candidate.findings, indent="    ")
    if plan.unchanged:
        out.print(f"\n  unchanged: {_clean(', '.join(plan.unchanged))}")
    for refusal in plan.refusals:
        out.print(
            f"\n  [red]refused[/red] {_clean(refusal.name)} [{refusal.code}]: "
            f"{_clean(refusal.message)}"
        )
    for warning in plan.warnings:
        out.print(f"  [yellow]warning[/yellow]: {_clean(warning)}")
    out.print("")


_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}


def _print_findings(out: Any, findings: Sequence[Finding], *, indent: str = "  ") -> None:
    if not findings:
        out.print(f"{indent}audit: no findings")
        return
    out.print(f"{indent}audit: {len(findings)} finding(s)")
    for finding in findings:
        style = _SEVERITY_STYLE[finding.severity]
        out.print(
            f"{indent}  [{style}]{finding.severity.upper():<6}[/{style}] {finding.code}  "
            f"{_clean(finding.path)}:{finding.line}  {_clean(finding.excerpt)}"
        )
        out.print(f"{indent}         {_clean(finding.message)}")


def _report(outcome: Outcome, as_json: bool) -> None:
    if as_json:
        _emit(outcome.to_dict(), None if outcome.ok else _outcome_error(outcome))
    else:
        out = console()
        _print_recovered(out, outcome.recovered)
        for item in outcome.written:
            verb = "updated" if item.action == "update" else "installed"
            out.print(
                f"[green]{verb}[/green] {_clean(item.candidate.name)} -> "
                f"{_clean(outcome.plan.skills_dir)}/{_clean(item.candidate.name)}"
            )
        for name in outcome.removed:
            out.print(f"[green]removed[/green] {_clean(name)}")
        if outcome.plan.unchanged and not outcome.written:
            out.print(f"unchanged: {_clean(', '.join(outcome.plan.unchanged))}")
        for refusal in outcome.refusals:
            sys.stderr.write(
                f"skillpack: refused {visible(refusal.name)} [{refusal.code}]: "
                f"{visible(refusal.message)}\n"
            )
        for warning in outcome.warnings:
            sys.stderr.write(f"skillpack: warning: {visible(warning)}\n")
    if not outcome.ok:
        raise SystemExit(1)


def _emit(data: dict[str, Any], error: dict[str, Any] | None) -> None:
    """A command's JSON document, with `error` added when it failed."""
    if error is not None:
        data["error"] = error
    emit_json(data)


def _print_recovered(out: Any, names: Sequence[str]) -> None:
    for name in names:
        out.print(
            f"[yellow]recovered[/yellow] {_clean(name)}: an interrupted install was rolled back"
        )


def _outcome_error(outcome: Outcome) -> dict[str, Any]:
    if not outcome.approved:
        return error_fields(
            "APPROVAL_REQUIRED", "Nothing was written: the plan was not approved (use --yes)."
        )
    names = ", ".join(f"{r.name} ({r.code})" for r in outcome.refusals)
    return error_fields("REFUSED", f"Refused: {names}.")


# --- errors, progress, escaping -------------------------------------------------------


@contextlib.contextmanager
def _progress(as_json: bool) -> Iterator[Callable[[str, int, int | None], None] | None]:
    """A rich progress bar on a terminal's stderr; nothing for --json or a pipe."""
    if as_json or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    tasks: dict[str, Any] = {}
    with Progress(
        TextColumn("{task.description}"),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=console(stderr=True),
        transient=True,
    ) as bar:

        def hook(url: str, done: int, total: int | None) -> None:
            if done < 0:
                task = tasks.pop(url, None)
                if task is not None:
                    bar.remove_task(task)
                return
            if url not in tasks:
                tasks[url] = bar.add_task(visible(url.rsplit("/", 1)[-1])[:40], total=total)
            bar.update(tasks[url], completed=done, total=total)

        yield hook


def _clean(text: str) -> str:
    """`visible` text with rich markup escaped."""
    from rich.markup import escape

    return escape(visible(text))
