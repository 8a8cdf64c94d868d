"""The closed vocabularies: every value described, and the results schema written from those descriptions."""

from typing import get_args

from harness.run.records import COLUMNS
from harness.run.schema_doc import PAGE
from harness.trace.vocab import ERROR_TYPES, STEP_ERROR_KINDS, ErrorType, StepErrorKind


def test_every_error_type_has_a_description():
    assert set(ERROR_TYPES) == set(get_args(ErrorType)) and all(d.strip() for d in ERROR_TYPES.values())


def test_every_step_error_kind_has_a_description():
    assert set(STEP_ERROR_KINDS) == set(get_args(StepErrorKind)) and all(d.strip() for d in STEP_ERROR_KINDS.values())


def test_the_error_type_column_and_the_schema_page_list_every_error_type_with_its_description():
    column = COLUMNS["error_type"][1]
    page = " ".join(PAGE.read_text().split())
    for name, description in ERROR_TYPES.items():
        assert f"{name} ({description})" in column
        assert f"{name} ({description})" in page.replace("\\|", "|")


def test_a_run_timeout_and_a_code_blocks_timeout_have_different_names():
    assert "timeout" in ERROR_TYPES and "timeout" not in STEP_ERROR_KINDS and "code_timeout" in STEP_ERROR_KINDS
