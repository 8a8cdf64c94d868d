"""The bearer token: generated at start, or read from HARNESS_SERVE_TOKEN or a named file, never both; a short or
unprintable one is refused; a request's token is compared whole."""

import pytest

from harness.errors import UserError
from harness.serve.token import MIN_TOKEN_CHARS, TOKEN_VARIABLE, load_token

GOOD = "k" * MIN_TOKEN_CHARS


def test_without_a_source_a_new_random_token_is_generated_each_time():
    first, second = load_token(None, {}), load_token(None, {})
    assert first.generated and first.source == "generated"
    assert len(first.value) >= MIN_TOKEN_CHARS and first.value != second.value


def test_the_token_comes_from_the_variable():
    token = load_token(None, {TOKEN_VARIABLE: f"  {GOOD}\n"})
    assert token.value == GOOD and token.source == TOKEN_VARIABLE and not token.generated


def test_the_token_comes_from_a_file_without_its_trailing_newline(tmp_path):
    path = tmp_path / "token"
    path.write_text(GOOD + "\n")
    token = load_token(path, {})
    assert token.value == GOOD and token.source == str(path)


def test_a_file_and_the_variable_together_are_refused(tmp_path):
    path = tmp_path / "token"
    path.write_text(GOOD)
    with pytest.raises(UserError, match="both set: give the token one way"):
        load_token(path, {TOKEN_VARIABLE: GOOD})


def test_a_short_token_is_refused_with_how_to_make_one():
    with pytest.raises(UserError, match=f"{TOKEN_VARIABLE}: the token is 5 characters; use at least 32.*secrets"):
        load_token(None, {TOKEN_VARIABLE: "short"})


def test_a_token_with_a_space_inside_is_refused():
    with pytest.raises(UserError, match="printable ASCII characters without spaces"):
        load_token(None, {TOKEN_VARIABLE: GOOD + " " + GOOD})


def test_a_missing_token_file_is_one_line_naming_it(tmp_path):
    with pytest.raises(UserError, match="nope: cannot read the token file"):
        load_token(tmp_path / "nope", {})


def test_only_the_whole_token_matches():
    token = load_token(None, {TOKEN_VARIABLE: GOOD})
    assert token.matches(GOOD.encode())
    assert not token.matches(GOOD[:-1].encode()) and not token.matches((GOOD + "k").encode())
    assert not token.matches(b"")


def test_the_token_does_not_show_in_its_repr():
    assert GOOD not in repr(load_token(None, {TOKEN_VARIABLE: GOOD}))
