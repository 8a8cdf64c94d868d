"""pydantic's validation errors said in the words of the file the user wrote: the path as written (indexes in
brackets, union members' tags dropped), the value, and what was expected, on one line."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from harness.errors import describe_error, first_error

Entry = str | dict[str, dict[str, int | list[str]]]


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    servers: list[Entry] = []
    retries: int = 0

    @field_validator("name")
    @classmethod
    def _no_spaces(cls, value: str) -> str:
        if " " in value:
            raise ValueError(f"'{value}' has a space (names are one word)")
        return value


def error_of(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Config.model_validate(data)
    return info.value


def test_a_union_members_tags_are_dropped_and_the_member_the_value_was_meant_for_is_reported():
    data = {"name": "s", "servers": ["crm", {"crm": {"size": "big"}}]}
    assert "str" in str(error_of(data))  # pydantic's own words name the union member `str` first
    assert describe_error(error_of(data), data) == (
        "field 'servers[1].crm.size': 'big' is not valid: expected a valid integer or a valid list")


def test_a_value_no_union_member_takes_lists_every_members_expectation():
    data = {"name": "s", "servers": [5]}
    assert describe_error(error_of(data), data) == (
        "field 'servers[0]': 5 is not valid: expected a valid string or a valid dictionary")


def test_a_single_expectation_keeps_pydantics_reason():
    data = {"name": "s", "retries": "often"}
    assert describe_error(error_of(data), data) == (
        "field 'retries': 'often' is not valid: expected a valid integer, unable to parse string as an integer")


def test_a_validators_sentence_is_kept_and_names_the_value_once():
    data = {"name": "my suite"}
    assert describe_error(error_of(data), data) == "field 'name': 'my suite' has a space (names are one word)"
    data = {"name": ""}
    assert describe_error(error_of(data), data) == "field 'name': '': String should have at least 1 character"


def test_missing_and_unknown_fields_are_named_without_a_value():
    assert describe_error(error_of({}), {}) == "field 'name': Field required"
    data = {"name": "s", "retrys": 2}
    assert describe_error(error_of(data), data) == "field 'retrys': Extra inputs are not permitted"


def test_the_path_of_the_validated_part_goes_in_front():
    data = {"name": "s", "retries": "x"}
    assert describe_error(error_of(data), data, at="mcpServers.m").startswith("field 'mcpServers.m.retries': 'x'")
    with pytest.raises(ValidationError) as info:
        TypeAdapter(list[int]).validate_python(["x"])
    assert describe_error(info.value, ["x"], at="sizes").startswith("field 'sizes[0]': 'x' is not valid")


def test_without_the_data_union_tags_are_told_by_their_look():
    assert first_error(error_of({"name": "s", "servers": [{"crm": {"size": "big"}}]}))[0] == "servers[0].crm.size"


def test_a_long_value_is_cut_to_one_short_line():
    data = {"name": "s", "retries": "x" * 500}
    message = describe_error(error_of(data), data)
    assert len(message) < 160 and "..." in message and "\n" not in message
