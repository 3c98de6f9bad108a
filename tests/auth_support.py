"""Keys, tokens and a JWKS server for the auth tests and `bench/bench_auth.py` (not a
test file; it imports nothing from the tests' conftest, so the bench can import it).

`Issuer` makes an RSA and an EC key, publishes them as a JWK set and signs tokens
with either; `bad_tokens` are the tokens every server must refuse with 401.
`JwksServer` serves an issuer's set over plain http on 127.0.0.1 and counts fetches.
`serve_team` runs `skillpack mcp` or `skillpack serve` over the team's skills with
JWT auth on (`server_process`: any server printing its address as one JSON line).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://idp.example/realms/team"
AUDIENCE = "https://skills.example/mcp"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Issuer:
    """An authorization server's signing keys: RSA (`kid` rsa-1) and EC P-256 (ec-1)."""

    def __init__(self, *, rsa_kid: str = "rsa-1", ec_kid: str = "ec-1") -> None:
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.rsa_kid, self.ec_kid = rsa_kid, ec_kid

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key()))
        ec_jwk = json.loads(ECAlgorithm.to_jwk(self.ec.public_key()))
        rsa_jwk.update(kid=self.rsa_kid, use="sig", alg="RS256")
        ec_jwk.update(kid=self.ec_kid, use="sig", alg="ES256")
        return {"keys": [rsa_jwk, ec_jwk]}

    def write_jwks(self, path: Path) -> Path:
        path.write_text(json.dumps(self.jwks()), encoding="utf-8")
        return path

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": "alice",
            "azp": "agent",
            "iat": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, *, algorithm: str = "RS256", kid: str | None = None, **claims: Any) -> str:
        """A token signed with the RSA key (RS256) or the EC key (ES256)."""
        key = self.rsa if algorithm == "RS256" else self.ec
        default_kid = self.rsa_kid if algorithm == "RS256" else self.ec_kid
        return jwt.encode(
            self.claims(**claims),
            key,
            algorithm=algorithm,
            headers={"kid": kid or default_kid},
        )

    def public_pem(self) -> bytes:
        return self.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def hmac_with_public_key(issuer: Issuer) -> str:
    """HS256 signed with the issuer's public RSA key as the secret (the key-confusion
    attack: a verifier that lets the token pick the algorithm accepts it)."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": issuer.rsa_kid}).encode())
    payload = _b64(json.dumps(issuer.claims()).encode())
    signing = f"{header}.{payload}".encode()
    signature = hmac.new(issuer.public_pem(), signing, hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


def alg_none(issuer: Issuer) -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    payload = _b64(json.dumps(issuer.claims()).encode())
    return f"{header}.{payload}."


def bad_tokens(issuer: Issuer) -> dict[str, str | None]:
    """Every kind of token a server must answer 401 (None: no Authorization header)."""
    stranger = Issuer()  # same kids, other keys
    now = int(time.time())
    return {
        "no token": None,
        "expired": issuer.token(exp=now - 3600, iat=now - 7200),
        "wrong audience": issuer.token(aud="https://other.example/mcp"),
        "wrong issuer": issuer.token(iss="https://evil.example"),
        "another key": stranger.token(),
        "alg none": alg_none(issuer),
        "hmac with the public key": hmac_with_public_key(issuer),
        "garbage": "not-a-jwt",
    }


class JwksServer:
    """An issuer's JWK set at `url` (plain http on 127.0.0.1), counting the fetches;
    the keys of `rotated` issuers are published beside it (a key rotation)."""

    def __init__(self, issuer: Issuer) -> None:
        self.issuer = issuer
        self.rotated: list[Issuer] = []
        self.fetches = 0
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server naming
                served.fetches += 1
                keys = [k for i in (served.issuer, *served.rotated) for k in i.jwks()["keys"]]
                body = json.dumps({"keys": keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/certs"

    @contextmanager
    def running(self) -> Iterator[JwksServer]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


def write_auth_config(
    project: Path, *, jwks: str, grants: Sequence[tuple[str, str, list[str]]] = ()
) -> Path:
    """`<project>/.skillpack/config.toml` with `[auth]` and one `[[auth.grant]]` per
    (claim, value, skills); `project` gets a `.git` so it is a project root."""
    (project / ".git").mkdir(parents=True, exist_ok=True)
    folder = project / ".skillpack"
    folder.mkdir(exist_ok=True)
    lines = [
        "[auth]",
        f"jwks = {json.dumps(jwks)}",
        f"issuer = {json.dumps(ISSUER)}",
        f"audience = {json.dumps(AUDIENCE)}",
    ]
    for claim, value, skills in grants:
        lines += [
            "[[auth.grant]]",
            f"claim = {json.dumps(claim)}",
            f"value = {json.dumps(value)}",
            f"skills = {json.dumps(skills)}",
        ]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


TEAM = {
    "finance-report/SKILL.md": "finance-report",
    "finance-audit/SKILL.md": "finance-audit",
    "hr-payroll/SKILL.md": "hr-payroll",
    "eng-deploy/SKILL.md": "eng-deploy",
    "public-help/SKILL.md": "public-help",
}
"""A team's skills: each group sees its own and the public ones."""
GRANTS = [
    ("groups", "finance", ["finance-*", "public-*"]),
    ("realm_access.roles", "hr", ["hr-*", "public-*"]),
    ("roles", "Skills.Eng", ["eng-*", "public-*"]),
]
"""One grant per claim shape: a plain list (`groups`), Keycloak's nested realm roles
and Entra's app roles."""
SEES = {
    "finance": ["finance-audit", "finance-report", "public-help"],
    "hr": ["hr-payroll", "public-help"],
    "eng": ["eng-deploy", "public-help"],
}


def write_team(root: Path) -> Path:
    """The team's skills under `root`, each with a reference file and arguments."""
    for rel, name in TEAM.items():
        folder = root / rel.rsplit("/", 1)[0]
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill of the team. Use it for "
            f"{name.replace('-', ' ')} work.\n---\n# {name}\n\nRead references/notes.md.\n",
            encoding="utf-8",
        )
        (folder / "references" / "notes.md").write_text(f"# Notes of {name}\n", "utf-8")
    return root


def team_token(issuer: Issuer, group: str) -> str:
    """A token of a member of `group`, in the claim shape its grant reads."""
    if group == "finance":
        return issuer.token(sub="fay", groups=["finance"])
    if group == "hr":
        return issuer.token(sub="hal", realm_access={"roles": ["hr", "offline_access"]})
    return issuer.token(sub="eve", algorithm="ES256", roles=["Skills.Eng"])


@contextmanager
def server_process(
    argv: Sequence[str], *, env: dict[str, str], stderr_path: Path
) -> Iterator[dict[str, Any]]:
    """Start a server printing one JSON line once it listens; yield that line's object
    (with the process under `process`), and stop it at the end."""
    with (
        stderr_path.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
        ) as process,
    ):
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line, stderr_path.read_text(encoding="utf-8")
            yield {**json.loads(line), "process": process}
        finally:
            process.terminate()
            process.wait(timeout=30)


@contextmanager
def serve_team(
    command: str, base: Path, *, jwks: str, env: dict[str, str]
) -> Iterator[dict[str, Any]]:
    """`skillpack <command> --transport http` (`mcp` or `serve`) on a free port over the
    team's skills (`write_team`), its project's config turning JWT auth on against
    `jwks` with `GRANTS`; yields its start line (`server_process`) with `errors`, the
    file its stderr goes to."""
    tree = write_team(base / "skills")
    project = base / "project"
    write_auth_config(project, jwks=jwks, grants=GRANTS)
    argv = [
        *(sys.executable, "-c", "from skillpack.cli import main; main()", command),
        *("--transport", "http", "--port", "0", "--json", "--root", str(tree)),
        *("--no-system", "--cwd", str(project)),
    ]
    errors = base / "server.err"
    with server_process(argv, env=env, stderr_path=errors) as info:
        yield {**info, "errors": errors}
