"""Atomic installs: a process killed at any step leaves the previous state, and concurrent
installs into one scope are serialized. Every install here is a real `skillpack` process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from install_support import serve, skill_md, skillpack_env, tree_files, write_skill

from skillpack._model import Root
from skillpack.discovery._discover import discover
from skillpack.install import publish

# Runs the CLI with one internal step replaced by "report, then wait to be killed".
PAUSING_CLI = """
import sys, time
import skillpack.install._txn as txn
step = sys.argv[1]
real = getattr(txn, step)
def paused(*args, **kwargs):
    result = real(*args, **kwargs) if step == "stage" else None
    print("PAUSED", flush=True)
    time.sleep(120)
    return result
setattr(txn, step, paused)
from skillpack.cli import main
sys.argv = ["skillpack", *sys.argv[2:]]
main()
"""


def skillpack(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from skillpack.cli import main; main()", *args],
        env=skillpack_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_until_paused(home: Path, step: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", PAUSING_CLI, step, *args],
        env=skillpack_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() == "PAUSED":
            return process
    raise AssertionError(process.stderr.read() if process.stderr else "no output")


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def installed(home: Path) -> Path:
    return home / ".agents" / "skills"


def listed(home: Path) -> dict[str, str]:
    """What discovery sees in the user skills folder: name -> description."""
    catalog = discover(roots=[Root(path=str(installed(home)), scope="user")], use_cache=False)
    return {skill.name: skill.description for skill in catalog.skills}


def lock_text(home: Path) -> str:
    return (home / ".agents" / ".skillpack-lock.json").read_text()


def two_versions(tmp_path: Path, home: Path) -> Path:
    """`pdf` v1 installed from a local folder, whose files are now v2."""
    src = tmp_path / "src"
    write_skill(src, "pdf", description="Version one.", files={"references/a.md": "one\n"})
    result = skillpack(home, "install", str(src), "--yes")
    assert result.returncode == 0, result.stderr
    write_skill(src, "pdf", description="Version two.", files={"references/a.md": "two\n"})
    return src


def test_a_kill_after_staging_leaves_the_old_version_and_no_visible_stray(
    tmp_path: Path, isolated_home: Path
) -> None:
    two_versions(tmp_path, isolated_home)
    before, lock_before = tree_files(installed(isolated_home) / "pdf"), lock_text(isolated_home)
    process = run_until_paused(isolated_home, "stage", "update", "--yes")
    kill(process)
    leftovers = [p.name for p in installed(isolated_home).iterdir() if p.name.startswith(".")]
    assert any(name.startswith(".skillpack-txn-") for name in leftovers)
    assert tree_files(installed(isolated_home) / "pdf") == before
    assert lock_text(isolated_home) == lock_before
    assert listed(isolated_home) == {"pdf": "Version one."}
    doctor = skillpack(isolated_home, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout
    strays = [p for p in installed(isolated_home).iterdir() if p.name.startswith(".skillpack-txn")]
    assert strays == []


def test_a_kill_after_the_swap_before_the_lock_is_rolled_back_to_the_old_version(
    tmp_path: Path, isolated_home: Path
) -> None:
    two_versions(tmp_path, isolated_home)
    before, lock_before = tree_files(installed(isolated_home) / "pdf"), lock_text(isolated_home)
    process = run_until_paused(isolated_home, "write_lock", "update", "--yes")
    kill(process)
    assert lock_text(isolated_home) == lock_before  # the commit never happened
    doctor = skillpack(isolated_home, "doctor", "--json")
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 0 and report["recovered"] == ["pdf"] and report["clean"]
    assert tree_files(installed(isolated_home) / "pdf") == before
    assert listed(isolated_home) == {"pdf": "Version one."}
    # And the interrupted update simply runs again.
    again = skillpack(isolated_home, "update", "--yes")
    assert again.returncode == 0, again.stderr
    assert listed(isolated_home) == {"pdf": "Version two."}


def test_a_kill_after_the_lock_is_written_keeps_the_new_version(
    tmp_path: Path, isolated_home: Path
) -> None:
    two_versions(tmp_path, isolated_home)
    process = run_until_paused(isolated_home, "finish", "update", "--yes")
    kill(process)
    doctor = json.loads(skillpack(isolated_home, "doctor", "--json").stdout)
    assert doctor["clean"] and doctor["recovered"] == []
    assert listed(isolated_home) == {"pdf": "Version two."}


def test_a_kill_mid_download_leaves_everything_as_it_was(
    tmp_path: Path, isolated_home: Path
) -> None:
    src, site = tmp_path / "src", tmp_path / "site"
    write_skill(src, "big", description="Version one.")
    publish(str(src), str(site))
    with serve(site) as server:
        url = server.url + "/slow"
        first = skillpack(isolated_home, "install", url, "--yes")
        assert first.returncode == 0, first.stderr
        before, lock_before = tree_files(installed(isolated_home)), lock_text(isolated_home)
        write_skill(
            src,
            "big",
            description="Version two.",
            files={"assets/data.txt": os.urandom(12_000).hex()},
        )
        publish(str(src), str(site))
        process = subprocess.Popen(
            [sys.executable, "-c", "from skillpack.cli import main; main()", "update", "--yes"],
            env=skillpack_env(isolated_home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not any(line.endswith("big.tar.gz") for line in server.requests()):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # inside the slow body
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert tree_files(installed(isolated_home)) == before
    assert lock_text(isolated_home) == lock_before
    assert listed(isolated_home) == {"big": "Version one."}


def test_concurrent_installs_into_one_scope_all_land_in_the_lock(
    tmp_path: Path, isolated_home: Path
) -> None:
    names = [f"skill-{i}" for i in range(8)]
    for name in names:
        write_skill(tmp_path / "src" / name, name)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from skillpack.cli import main; main()",
                "install",
                str(tmp_path / "src" / name),
                "--yes",
            ],
            env=skillpack_env(isolated_home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    errors = [p.communicate(timeout=120)[1] for p in processes]
    assert [p.returncode for p in processes] == [0] * len(names), errors
    lock = json.loads(lock_text(isolated_home))
    assert sorted(lock["skills"]) == names
    assert sorted(listed(isolated_home)) == names
    assert json.loads(skillpack(isolated_home, "doctor", "--json").stdout)["clean"]
    assert skill_md("skill-0") == (installed(isolated_home) / "skill-0" / "SKILL.md").read_text()


def test_concurrent_installs_of_one_skill_all_succeed_and_say_when_they_wait(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Four `install --yes` of the same skill into one scope: each
    waits for the scope's lock and finds the skill installed, none fails with a reason
    that did not happen (nothing waited for approval)."""
    write_skill(tmp_path / "src" / "shared", "shared")
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from skillpack.cli import main; main()",
                "install",
                str(tmp_path / "src" / "shared"),
                "--yes",
            ],
            env=skillpack_env(isolated_home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, outputs
    assert not any("approval" in out + err for out, err in outputs)
    assert sorted(listed(isolated_home)) == ["shared"]
    assert json.loads(skillpack(isolated_home, "doctor", "--json").stdout)["clean"]


def test_a_change_waiting_for_the_scope_lock_says_so_once(tmp_path: Path) -> None:
    from skillpack.install._txn import Target

    target = Target(
        scope="user",
        base=tmp_path,
        skills_dir=tmp_path / "skills",
        lock_path=tmp_path / "lock.json",
    )
    said: list[str] = []
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from skillpack.config._lock import file_lock\n"
            f"with file_lock({str(tmp_path / 'skills' / '.skillpack')!r}):\n"
            "    print('held', flush=True); sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert holder.stdin is not None
        stdin = holder.stdin

        def waiting(line: str) -> None:
            """The install says it waits: the holder lets go of the lock now."""
            said.append(line)
            stdin.write("go\n")
            stdin.flush()

        with target.locked(waiting):
            pass
    assert len(said) == 1 and "Waiting for another skillpack install" in said[0]
    with target.locked(said.append):
        pass
    assert len(said) == 1  # no wait, no line
