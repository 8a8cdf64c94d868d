"""The content hash saved programs and results rows carry: its value for a given input never changes."""

from harness.agents.programs import program_hash
from harness.hashing import content_hash


def test_the_hash_of_a_known_value_is_pinned():
    # computed with the canonical form programs and tasks used before the helper existed
    value = {"instructions": "Sé breve", "demos": [{"q": 1}], "n": 1}
    assert content_hash(value) == "ddff18c6d79c3834"
    assert program_hash(value) == "ddff18c6d79c3834"


def test_key_order_does_not_change_the_hash():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
