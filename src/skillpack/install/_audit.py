"""The audit of a skill's text for risky content (pure: text in, findings out).

Shown before an install is approved and printed by `skillpack audit`. Each finding
has a stable `code` and a `severity`:

- `remote-code-execution` (high): network content run by a shell or interpreter
  (`curl … | sh`, `bash <(wget …)`, `iex (iwr …)`);
- `data-exfiltration` (high): local files or the environment sent out
  (`curl -d @~/.ssh/id_rsa`, `env | nc`, `/dev/tcp/`);
- `instruction-override` (high): text telling the agent to drop its rules or to hide
  what it does from the user;
- `safety-bypass` (medium): text telling the agent to skip confirmations, permission
  checks or the sandbox;
- `obfuscated-payload`: decode-and-run (`base64 -d | sh`, `exec(b64decode(…))`) is
  high; a long base64, hex or char-code blob is medium;
- `hidden-text` (medium): zero-width, bidi-control or Unicode tag characters;
- `destructive-command` (high): `rm -rf /` or `~`, `mkfs`, `dd` onto a disk, a fork bomb.

The rules look at one logical line at a time (backslash continuations joined). They
aim at commands that do harm when run, so a download to a file (`curl -o x URL`), an
`Authorization` header, a 64-hex digest or prose that *describes* an attack ("look
for `ignore previous instructions`") is not a finding.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["high", "medium", "low"]
SEVERITY_ORDER: Mapping[str, int] = {"high": 0, "medium": 1, "low": 2}

MAX_SCANNED_BYTES = 1024 * 1024
"""Bytes of each file the audit reads; the rest of a larger file is not scanned."""
MAX_LINE_CHARS = 8192
"""Command rules see this much of each line (a blob rule sees all of it)."""
MAX_FINDINGS_PER_FILE = 50


@dataclass(frozen=True, kw_only=True, slots=True)
class Finding:
    """One risky thing in one file."""

    code: str
    """Stable identifier (see the module docstring)."""
    severity: Severity
    path: str
    """The file, relative to the skill folder."""
    line: int
    """1-based line of the match."""
    message: str
    """What was found and why it matters."""
    excerpt: str
    """The matched text, shortened to 120 characters."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True)
class _Rule:
    code: str
    severity: Severity
    source: str
    """The pattern (case-insensitive), compiled the first time a line needs it."""
    message: str
    anchors: tuple[str, ...]
    """Every match holds one of these (lowercase): a word (as split by `_WORD_BREAKS`)
    or, with a leading `~`, a fragment found anywhere. Only lines holding one are
    searched: the patterns are far costlier than finding a word."""
    prose: bool = False
    """A rule about wording: skipped where the line describes the pattern."""

    @property
    def pattern(self) -> re.Pattern[str]:
        compiled = _COMPILED.get(self.code)
        if compiled is None:
            compiled = _COMPILED[self.code] = re.compile(self.source, re.IGNORECASE)
        return compiled


_COMPILED: dict[str, re.Pattern[str]] = {}


_FETCH = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)"
_REMOTE = r"(?:https?://|ftp://|\$\{?\w|\S+\.\w{2,}/)"
_RUNNER = (
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?"
    r"(?:(?:ba|z|da|k|fi|c|tc)?sh|python[0-9.]*(?!\s+-m\s+json\.tool)|perl|ruby|node|php"
    r"|iex|invoke-expression|source)"
)
_SECRET_FILE = (
    r"(?:\.ssh/|id_rsa|id_ed25519|\.aws/|credentials|\.netrc|\.env\b|/etc/passwd|/etc/shadow"
    r"|\.npmrc|\.pypirc|\.kube/config|\.docker/config|\.git-credentials|\.bash_history)"
)
_NET = r"(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|rsync|ftp)"

_RULES: tuple[_Rule, ...] = (
    _Rule(
        "remote-code-execution",
        "high",
        (
            rf"\b{_FETCH}\b[^\n|;&]*{_REMOTE}[^\n|;&]*\|\s*{_RUNNER}\b"
            rf"|\b(?:(?:ba|z)?sh|source)\s+<\(\s*{_FETCH}\b"
            rf"|\b(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*{_FETCH}\b"
            rf"|\b(?:iex|invoke-expression)\b[\s(]*(?:\(\s*)?"
            rf"(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object\s+net\.webclient)\b"
            rf"|\beval\s+[\"']?\$\(\s*{_FETCH}\b"
        ),
        "Downloads code and runs it in one step: whatever the server sends runs with the "
        "agent's permissions, unreviewed.",
        (
            "curl",
            "wget",
            "iwr",
            "irm",
            "iex",
            "invoke-expression",
            "invoke-webrequest",
            "invoke-restmethod",
        ),
    ),
    _Rule(
        "data-exfiltration",
        "high",
        (
            r"\bcurl\b[^\n]*?\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form)\s*"
            r"[\"']?(?:[\w.-]+=)?@(?!-\s)[^\s\"']"
            r"|\bcurl\b[^\n]*?\s(?:-T|--upload-file)\s"
            r"|\bwget\b[^\n]*--(?:post|body)-file"
            rf"|\b(?:env|printenv|set)\b\s*\|\s*{_NET}\b"
            rf"|\bcat\b[^\n|]*{_SECRET_FILE}[^\n|]*\|\s*(?:base64\s*\|\s*)?{_NET}\b"
            rf"|\b{_NET}\b[^\n]*\$\(\s*(?:env|printenv|cat\s[^)]*{_SECRET_FILE})"
            r"|(?-i:\b(?:nc|ncat|netcat|socat)\s)[^\n<]*<\s*[~/$.\w]"
            r"|/dev/tcp/"
            r"|\brequests\.(?:post|put)\([^\n]*\b(?:data|json|files)\s*=\s*"
            r"(?:dict\(\s*)?(?:os\.environ\s*[,)]|\{?[^\n]*\bopen\()"
        ),
        "Sends local files or environment variables to another machine.",
        (
            "curl",
            "wget",
            "nc",
            "ncat",
            "netcat",
            "socat",
            "telnet",
            "scp",
            "rsync",
            "ftp",
            "requests.post",
            "requests.put",
            "~/dev/tcp/",
        ),
    ),
    _Rule(
        "instruction-override",
        "high",
        (
            r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|of|the|your)\s+)*"
            r"(?:previous|prior|above|earlier|preceding|system|original|your|safety)\s+"
            r"(?:\w+\s+)?(?:instructions?|rules|guidelines|prompts?|directives|polic(?:y|ies))\b"
            r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|mention\s+(?:this\s+)?to"
            r"|reveal\s+(?:this\s+)?to)\s+(?:the\s+)?(?:user|human|operator)\b"
            r"|\byou\s+are\s+(?:now\s+)?(?:no\s+longer|not)\s+(?:bound|restricted|limited)\b"
        ),
        "Tells the agent to drop its rules or to hide what it does from the user.",
        (
            "ignore",
            "disregard",
            "forget",
            "override",
            "tell",
            "inform",
            "notify",
            "alert",
            "mention",
            "reveal",
            "bound",
            "restricted",
            "limited",
        ),
        prose=True,
    ),
    _Rule(
        "safety-bypass",
        "medium",
        (
            r"\b(?:bypass|disable|skip|turn\s+off|circumvent|ignore)\s+(?:the\s+|all\s+|any\s+)?"
            r"(?:safety|security|permission|approval|confirmation|sandbox|guardrail)s?\b"
            r"|\bwithout\s+(?:asking|telling|informing|notifying)\s+(?:the\s+)?(?:user|human)\b"
            r"|--dangerously-skip-permissions\b|--no-sandbox\b"
            r"|\bauto-?approve\s+(?:all|every)\b"
        ),
        "Tells the agent to skip confirmations, permission checks or the sandbox.",
        (
            "bypass",
            "disable",
            "skip",
            "turn",
            "circumvent",
            "ignore",
            "without",
            "--dangerously-skip-permissions",
            "--no-sandbox",
            "auto-approve",
            "autoapprove",
        ),
        prose=True,
    ),
    _Rule(
        "obfuscated-payload",
        "high",
        (
            rf"\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*{_RUNNER}\b"
            r"|\bxxd\s+-r\b[^\n]*\|\s*(?:ba|z)?sh\b"
            r"|\beval\s*\(\s*(?:atob|base64_decode|Buffer\.from|unescape)\s*\("
            r"|\bexec\s*\(\s*(?:base64\.b64decode|codecs\.decode|bytes\.fromhex|zlib\.decompress"
            r"|marshal\.loads|__import__\(\s*['\"]base64)"
        ),
        "Decodes hidden content and runs it: what runs cannot be read in the skill.",
        ("base64", "xxd", "eval", "exec"),
    ),
    _Rule(
        "destructive-command",
        "high",
        (
            r"\brm\s+(?:-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r)\s+"
            r"(?:--no-preserve-root\s+)?(?:/|~/?|\$HOME/?|/\*)(?=\s|$|[;&|\"'])"
            r"|\bmkfs(?:\.\w+)?\s+/dev/"
            r"|\bdd\b[^\n]*\bof=/dev/(?:sd|nvme|hd|disk|xvd)"
            r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
        ),
        "Destroys data beyond the task: a whole disk or home folder.",
        ("rm", "dd", "~mkfs", "~:()"),
    ),
)

_WORD_BREAKS = bytes.maketrans(b"|;&()[]{}<>'\"`$=,:*!?", b" " * 21)
"""Punctuation that splits words for the anchors (with whitespace): `$(curl` holds the
word `curl`, `env|nc` the word `nc`."""

_DESCRIBING = re.compile(
    r"\b(?:look(?:ing)?\s+for|watch\s+(?:out\s+)?for|such\s+as|e\.g\.|for\s+example|like|"
    r"detect(?:s|ing)?|flag(?:s|ging)?|refuse|reject|never\s+follow|injection|attacks?|"
    r"phrases?|instructions?\s+to|requests?\s+to)\b",
    re.IGNORECASE,
)
"""Words before a prose match that mark the line as describing the pattern."""

_MIN_BLOB = 64
"""Shortest whitespace-free token the blob rules look into (16 `\\xNN` escapes)."""
_BASE64_BLOB = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{120,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_BLOB = re.compile(r"(?:\\x[0-9a-fA-F]{2}){16,}|(?<![0-9a-fA-F])[0-9a-fA-F]{200,}")
_CHAR_CODES = re.compile(r"fromCharCode\(\s*(?:\d+\s*,\s*){15,}")
_HIDDEN = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,$")


def audit_text(path: str, text: str) -> tuple[Finding, ...]:
    """Every finding in one file's text (`path` is only copied into the findings)."""
    findings: list[Finding] = []
    seen: set[tuple[str, int]] = set()

    def add(code: str, severity: Severity, line: int, message: str, excerpt: str) -> None:
        if (code, line) in seen or len(findings) >= MAX_FINDINGS_PER_FILE:
            return
        seen.add((code, line))
        findings.append(
            Finding(
                code=code,
                severity=severity,
                path=path,
                line=line,
                message=message,
                excerpt=_shorten(excerpt),
            )
        )

    numbers, lines = _scan_lines(text)
    scan = "\n".join(lines)
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    lower = scan.lower()
    lower_starts = starts
    if len(lower) != len(scan):  # a few characters change length when lowercased
        parts = lower.split("\n")
        lower_starts = list(itertools.accumulate((len(p) + 1 for p in parts[:-1]), initial=0))
    words = set(lower.encode("utf-8", "surrogatepass").translate(_WORD_BREAKS).split())
    for rule in _RULES:
        present = [
            anchor[1:] if anchor[0] == "~" else anchor
            for anchor in rule.anchors
            if (anchor[1:] in lower if anchor[0] == "~" else anchor.encode() in words)
        ]
        if not present:
            continue
        for index in _anchored_lines(lower, lower_starts, present):
            line = lines[index]
            match = rule.pattern.search(line)
            if match is None:
                continue
            if rule.prose and _DESCRIBING.search(line, 0, match.start()):
                continue
            add(rule.code, rule.severity, numbers[index], rule.message, match.group(0))
    tokens = scan.split()
    long = (
        {token for token in tokens if len(token) >= _MIN_BLOB}
        if max(map(len, tokens), default=0) >= _MIN_BLOB
        else ()
    )
    for token in long:
        at = scan.find(token)
        for match in _BASE64_BLOB.finditer(token):
            blob = match.group(0)
            mixed = any(c.isupper() for c in blob) and any(c.islower() for c in blob)
            data_uri = _DATA_URI.search(token, 0, match.start())
            if mixed and any(c.isdigit() for c in blob) and not data_uri:
                add(
                    "obfuscated-payload",
                    "medium",
                    numbers[line_of(at)],
                    f"A {len(blob)}-character base64 blob: its content cannot be reviewed as text.",
                    blob,
                )
        hex_match = _HEX_BLOB.search(token)
        if hex_match is not None:
            add(
                "obfuscated-payload",
                "medium",
                numbers[line_of(at)],
                "A long hex or character-code sequence: its content cannot be reviewed as text.",
                hex_match.group(0),
            )
    for match in _CHAR_CODES.finditer(scan):
        add(
            "obfuscated-payload",
            "medium",
            numbers[line_of(match.start())],
            "A long hex or character-code sequence: its content cannot be reviewed as text.",
            match.group(0),
        )
    for at in _hidden_chars(text):
        line_start = text.rfind("\n", 0, at) + 1
        add(
            "hidden-text",
            "medium",
            text.count("\n", 0, at) + 1,
            f"An invisible character U+{ord(text[at]):04X} (zero-width, bidi control or "
            "tag): text a reviewer cannot see may still reach the model.",
            repr(text[max(line_start, at - 20) : at + 20]),
        )
    return tuple(findings)


def audit_files(files: Mapping[str, bytes]) -> tuple[Finding, ...]:
    """Findings of every text file (files with NUL bytes are skipped), most severe first."""
    findings: list[Finding] = []
    for path in sorted(files):
        data = files[path][:MAX_SCANNED_BYTES]
        if b"\0" in data:
            continue
        findings.extend(audit_text(path, data.decode("utf-8", "replace")))
    return sort_findings(findings)


def sort_findings(findings: list[Finding] | tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Most severe first, then by file and line."""
    return tuple(
        sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.path, f.line, f.code))
    )


def worst_severity(findings: tuple[Finding, ...]) -> Severity | None:
    """The most severe level among `findings`, or None when there are none."""
    return min((f.severity for f in findings), key=SEVERITY_ORDER.__getitem__, default=None)


_JOINERS = frozenset("\u200c\u200d\u200e\u200f")
"""Joiners and direction marks: normal inside emoji and non-Latin scripts."""


def _hidden_chars(text: str) -> Iterator[int]:
    """Offsets of invisible characters that do not belong to their text (the first few)."""
    count = 0
    for match in _HIDDEN.finditer(text):
        at = match.start()
        char = text[at]
        if char == "\ufeff" and at == 0:
            continue  # a byte-order mark
        if char in _JOINERS and at > 0 and ord(text[at - 1]) > 0x7F:
            continue
        yield at
        count += 1
        if count >= MAX_FINDINGS_PER_FILE:
            return


def _scan_lines(text: str) -> tuple[Sequence[int], list[str]]:
    """The lines the rules search: logical lines (continuations joined), each cut to
    `MAX_LINE_CHARS`, with the number of each one's first line in the file."""
    if "\\\n" not in text and "\\\r\n" not in text:
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if len(line) > MAX_LINE_CHARS:
                lines[index] = line[:MAX_LINE_CHARS]
        return range(1, len(lines) + 1), lines
    numbers: list[int] = []
    lines = []
    for number, line in _logical_lines(text):
        numbers.append(number)
        lines.append(line[:MAX_LINE_CHARS])
    return numbers, lines


def _anchored_lines(lower: str, starts: list[int], anchors: list[str]) -> list[int]:
    """Indexes of the lines of `lower` (line offsets `starts`) holding any anchor."""
    found: set[int] = set()
    for anchor in anchors:
        at = lower.find(anchor)
        while at != -1:
            index = bisect.bisect_right(starts, at) - 1
            found.add(index)
            following = starts[index + 1] if index + 1 < len(starts) else len(lower)
            at = lower.find(anchor, following)
    return sorted(found)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text) with backslash-newline continuations joined."""
    pending: list[str] = []
    start = 1
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.rstrip("\r")
        if stripped.endswith("\\") and len(pending) < 50:
            if not pending:
                start = number
            pending.append(stripped[:-1])
            continue
        if pending:
            pending.append(stripped)
            yield start, " ".join(pending)
            pending = []
        else:
            yield number, stripped
    if pending:
        yield start, " ".join(pending)


def _shorten(text: str, width: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
