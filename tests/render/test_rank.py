"""The catalog's rank: recent use, then scope, then precedence, never the alphabet."""

from __future__ import annotations

from dataclasses import replace

from skill_snapshots import make_skill

from skillpack._model import Scope
from skillpack.render._rank import catalog_rank


def test_used_skills_rank_first_most_recent_first_then_scope_then_precedence() -> None:
    scopes: list[Scope] = ["system", "user", "repo", "repo", "extra"]
    skills = [
        replace(make_skill(f"s{i}", "Does it."), scope=scope, rank=i % 2)
        for i, scope in enumerate(scopes)
    ]
    # s2 and s3 are both repo skills: s2's root (rank 0) is nearer than s3's (rank 1).
    assert catalog_rank(skills) == [2, 3, 4, 1, 0]
    recent = {skills[0].key: 5, skills[4].key: 9}
    assert catalog_rank(skills, recent) == [4, 0, 2, 3, 1]


def test_equal_skills_are_not_ranked_by_the_alphabet_and_rank_alike_every_time() -> None:
    skills = [make_skill(name, "Does it.") for name in "abcdefghijklmnopqrstuvwxyz"]
    order = catalog_rank(skills)
    assert sorted(order) == list(range(26))
    assert order != list(range(26))
    assert catalog_rank(list(reversed(skills))) == [25 - i for i in order]


def test_a_name_with_a_lone_surrogate_still_ranks() -> None:
    skills = [make_skill("bad\ud800name", "Does it."), make_skill("good", "Does it.")]
    assert sorted(catalog_rank(skills)) == [0, 1]
