"""The skill:// scheme: every served skill gets a distinct path ending in its name, and
incoming URIs that could mean anything but a plain relative path are refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillpack._errors import UsageError
from skillpack._model import Skill
from skillpack.mcp._uris import (
    MAX_URI_CHARS,
    _folders_above,
    assign_paths,
    encode,
    file_uri,
    parse,
    split,
)


def skill(folder: str, name: str, *, root: str = "/r", scope: str = "extra") -> Skill:
    return Skill(
        name=name,
        description="d",
        path=f"{folder}/SKILL.md",
        dir=folder,
        root=root,
        scope=scope,  # type: ignore[arg-type]
        real_path=f"{folder}/SKILL.md",
    )


@pytest.mark.parametrize(
    ("skills", "expected"),
    [
        ([skill("/r/pdf", "pdf")], ["extra/pdf"]),
        ([skill("/r/team/pdf", "pdf")], ["extra/team/pdf"]),
        # The folder is named otherwise: the name follows it.
        ([skill("/r/pdf-v2", "pdf")], ["extra/pdf-v2/pdf"]),
        # Scopes are the authority; a plugin's folders are part of the path.
        (
            [
                skill("/u/pdf", "pdf", root="/u", scope="user"),
                skill("/r/plugins/acme/skills/pdf", "pdf"),
            ],
            ["user/pdf", "extra/plugins/acme/skills/pdf"],
        ),
        # A nested skill extends its enclosing skill's path, even a renamed one.
        (
            [skill("/r/outer-dir", "outer"), skill("/r/outer-dir/tools/ocr", "ocr")],
            ["extra/outer-dir/outer", "extra/outer-dir/outer/tools/ocr"],
        ),
        # A sibling whose folder name starts like the enclosing one's is not inside it;
        # the nearest enclosing skill wins over one further up.
        (
            [
                skill("/r/pdf/tools/ocr/deep", "deep"),
                skill("/r/pdf-v2", "pdf-v2"),
                skill("/r/pdf", "pdf"),
                skill("/r/pdf/tools/ocr", "ocr"),
                skill("/r/pdf-v2/x", "x"),
            ],
            [
                "extra/pdf/tools/ocr/deep",
                "extra/pdf-v2",
                "extra/pdf",
                "extra/pdf/tools/ocr",
                "extra/pdf-v2/x",
            ],
        ),
        # Two same-named skills whose paths would collide: the second gets ~2.
        (
            [skill("/r/t/foo", "foo"), skill("/s/t/foo", "foo", root="/s")],
            ["extra/t/foo", "extra/t/~2/foo"],
        ),
        # A root that is itself a skill.
        ([skill("/r", "top")], ["extra/r/top"]),
        # Upstream MCP skills: the server label, then the upstream skill-path.
        (
            [skill("mcp://docs/billing/refunds", "refunds", root="mcp://", scope="mcp")],
            ["mcp/docs/billing/refunds"],
        ),
    ],
)
def test_every_skill_gets_a_distinct_path_ending_in_its_name(
    skills: list[Skill], expected: list[str]
) -> None:
    paths = assign_paths(skills)
    assert ["/".join(paths[s.key]) for s in skills] == expected
    assert all(paths[s.key][-1] == s.name for s in skills)


def test_segments_are_percent_encoded_and_parse_back() -> None:
    path = ("extra", "odd name", "ünï#?%", "pdf")
    uri = file_uri(path, "sub dir/a b.md")
    assert uri == "skill://extra/odd%20name/%C3%BCn%C3%AF%23%3F%25/pdf/sub%20dir/a%20b.md"
    assert parse(uri) == (*path, "sub dir", "a b.md")
    assert parse(encode(path)) == path


@pytest.mark.parametrize(
    "uri",
    [
        "skill://x/../y/SKILL.md",
        "skill://x/./y/SKILL.md",
        "skill://x/%2e%2e/y",
        "skill://x/%2E%2E/y",
        "skill://x/a%2Fb",
        "skill://x/a%5Cb",
        "skill://x/a%00b",
        "skill://x//y",
        "skill:///etc/passwd",
        "skill://",
        "file:///etc/passwd",
        "http://x/y",
        "/etc/passwd",
        "skill://x/y?z",
        "skill://x/y#z",
        "skill://x/%ff",
        "skill://x/" + "a" * MAX_URI_CHARS,
    ],
)
def test_uris_that_are_not_plain_relative_paths_are_refused(uri: str) -> None:
    with pytest.raises(UsageError):
        parse(uri)


def test_the_longest_served_prefix_names_the_skill() -> None:
    paths = {("extra", "outer"): "outer-key", ("extra", "outer", "tools", "ocr"): "ocr-key"}
    assert split(("extra", "outer", "a.md"), paths) == ("outer-key", ("a.md",))
    assert split(("extra", "outer", "tools", "ocr", "SKILL.md"), paths) == (
        "ocr-key",
        ("SKILL.md",),
    )
    assert split(("extra", "other", "SKILL.md"), paths) is None


_FOLDER = st.lists(st.sampled_from(["a", "b", "a-b", "ab"]), min_size=1, max_size=4)


@given(
    st.lists(
        st.tuples(_FOLDER, st.sampled_from(["/r", "/s"]), st.sampled_from(["extra", "user"])),
        max_size=12,
    )
)
def test_the_enclosing_folder_is_the_nearest_skill_folder_above_in_the_same_root(
    drawn: list[tuple[list[str], str, str]],
) -> None:
    skills = [
        skill("/r/" + "/".join(parts), "n", root=root, scope=scope) for parts, root, scope in drawn
    ]
    folders = [s.dir for s in skills]
    expected = {}
    for index, inner in enumerate(skills):
        above = [
            other.dir
            for other in skills
            if (other.scope, other.root) == (inner.scope, inner.root)
            and inner.dir.startswith(other.dir + "/")
        ]
        if above:
            expected[index] = max(above, key=len)
    assert _folders_above(skills, folders) == expected
