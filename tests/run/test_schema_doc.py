from harness.run.records import COLUMNS, SCHEMA_VERSION
from harness.run.schema_doc import PAGE, REGENERATE, schema_markdown


def test_the_results_schema_page_is_the_one_the_schema_writes():
    assert PAGE.read_text(encoding="utf-8") == schema_markdown(), f"docs/results-schema.md is stale: run {REGENERATE}"


def test_the_page_has_a_row_per_column_and_names_the_version_and_the_command():
    page = schema_markdown()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(COLUMNS)
    assert f"schema version {SCHEMA_VERSION}" in page and REGENERATE in page
    assert f"**v{SCHEMA_VERSION - 1} to v{SCHEMA_VERSION}:**" in page
