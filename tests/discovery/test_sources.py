"""The disk and the in-memory twin obey the same rules: one table, run on both.

Collisions (ambiguous names), the file listing and the confinement of bundled-file
reads come from shared code (`select._collisions`, `discovery._confine`); these
tests pin that both sources give the same answers for the same tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from skillpack._errors import SkillNotFoundError, SkillPermissionError
from skillpack._model import Catalog, Root, Skill
from skillpack.discovery._discover import discover
from skillpack.discovery._memory import MemorySkills
from skillpack.discovery._skill_files import list_skill_files, read_skill_file
from skillpack.runtime._readers import FileSystemReader, SkillContent

TREE = {
    "alpha/SKILL.md": "---\nname: alpha\ndescription: Alpha. Use for tests.\n---\nBody\n",
    "alpha/references/guide.md": "guide\n",
    "alpha/scripts/run.py": "print('hi')\n",
    "alpha/.secret": "hidden\n",
    "alpha/node_modules/pkg/index.js": "x\n",
    "beta/SKILL.md": "---\nname: beta\ndescription: Beta. Use for tests.\n---\nBody\n",
    "team-a/dup/SKILL.md": "---\nname: dup\ndescription: One dup. Use for tests.\n---\n",
    "team-b/dup/SKILL.md": "---\nname: dup\ndescription: Other dup. Use for tests.\n---\n",
}


class Source:
    """One way to hold TREE: a catalog plus the two reads under test."""

    def __init__(
        self,
        catalog: Catalog,
        list_files: Callable[[Skill], tuple[tuple[str, ...], bool]],
        read_file: Callable[[Skill, str], str],
        content: SkillContent,
    ) -> None:
        self.catalog = catalog
        self.list_files = list_files
        self.read_file = read_file
        self.content = content

    def skill(self, name: str) -> Skill:
        (skill,) = self.catalog.named(name)
        return skill


def disk(tmp_path: Path) -> Source:
    for rel, text in TREE.items():
        target = tmp_path / "skills" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    catalog = discover(roots=[Root(path=str(tmp_path / "skills"), scope="extra")], use_cache=False)
    return Source(catalog, list_skill_files, read_skill_file, FileSystemReader())


def memory(tmp_path: Path) -> Source:
    skills = MemorySkills({f"/skills/{rel}": text for rel, text in TREE.items()})
    return Source(skills.catalog(), skills.list_files, skills.read_file, skills)


@pytest.fixture(params=[disk, memory], ids=["disk", "memory"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Source:
    make: Callable[[Path], Source] = request.param
    return make(tmp_path)


def test_both_sources_report_a_name_tie_as_ambiguous(source: Source) -> None:
    codes = [p.code for p in source.catalog.problems]
    assert codes == ["name-ambiguous"]
    assert len(source.catalog.winners("dup")) == 2
    assert all(s.shadowed_by is None for s in source.catalog.skills)


def test_both_sources_list_the_same_files(source: Source) -> None:
    assert source.list_files(source.skill("alpha")) == (
        ("references/guide.md", "scripts/run.py"),
        False,
    )


def test_both_sources_give_the_same_manifest_and_bytes(source: Source) -> None:
    alpha = source.skill("alpha")
    files, truncated = source.content.manifest(alpha, max_files=10, max_bytes=1000)
    assert [(f.path, f.size) for f in files] == [
        ("SKILL.md", len(TREE["alpha/SKILL.md"])),
        ("references/guide.md", 6),
        ("scripts/run.py", 12),
    ]
    assert truncated is False
    for f in files:
        data = source.content.read_bytes(alpha, f.path, max_bytes=1000)
        assert f.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    # Past `max_bytes` nothing more is hashed; past `max_files` the listing stops.
    small, _ = source.content.manifest(alpha, max_files=10, max_bytes=len(TREE["alpha/SKILL.md"]))
    assert [bool(f.digest) for f in small] == [True, False, False]
    assert source.content.manifest(alpha, max_files=2, max_bytes=1000)[1] is True


@pytest.mark.parametrize(
    ("relpath", "expected"),
    [
        ("references/guide.md", "guide\n"),
        ("references\\guide.md", "guide\n"),
        ("./references/guide.md", "guide\n"),
        ("../beta/SKILL.md", SkillPermissionError),
        ("references/../../beta/SKILL.md", SkillPermissionError),
        ("%2e%2e/beta/SKILL.md", SkillPermissionError),
        ("%252e%252e/beta/SKILL.md", SkillPermissionError),
        ("..\\beta\\SKILL.md", SkillPermissionError),
        ("/etc/passwd", SkillPermissionError),
        ("C:/Windows/win.ini", SkillPermissionError),
        (".secret", SkillPermissionError),
        ("references/%00guide.md", SkillPermissionError),
        ("references/\x00guide.md", SkillPermissionError),
        ("", SkillNotFoundError),
        (".", SkillNotFoundError),
        ("references/none.md", SkillNotFoundError),
        ("references", SkillNotFoundError),
    ],
)
def test_both_sources_confine_reads_the_same_way(
    source: Source, relpath: str, expected: str | type[Exception]
) -> None:
    alpha = source.skill("alpha")
    if isinstance(expected, str):
        assert source.read_file(alpha, relpath) == expected
    else:
        with pytest.raises(expected):
            source.read_file(alpha, relpath)
