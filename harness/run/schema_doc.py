"""The results schema as a Markdown page (docs/results-schema.md), written from COLUMNS (RunRecord's fields) and
UPGRADES so the page cannot drift from the schema: `python -m harness.run.schema_doc` rewrites it, and a test
checks it is current."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from harness.run.records import COLUMNS, SCHEMA_VERSION, UPGRADES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "results-schema.md"
REGENERATE = "python -m harness.run.schema_doc"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def schema_markdown() -> str:
    """The whole page: what a results file is, one table row per column, and what each upgrade step fills in."""
    lines = [
        "# Results schema",
        "",
        f"<!-- Generated from harness/run/schema.py by `{REGENERATE}`; do not edit by hand. -->",
        "",
        ("`harness run` writes one row per run (task x arm x model x epoch) to `results/<suite>/<run_id>.parquet`, "
        "and each run's trajectory (every LM call's messages and output, code, tool calls and what came back) "
        "as one line of `results/<suite>/<run_id>.trajectories.jsonl`, found from the row's `trajectory_ref`. "
        f"This page describes schema version {SCHEMA_VERSION}. It is written from the schema's own declaration "
        f"(the fields of `RunRecord` in `harness/run/schema.py`): after changing the schema, run `{REGENERATE}` "
        "(a test fails while the page is out of date)."),
        "",
        ("Read results with `harness.read_results([path, ...])` (a pandas DataFrame, older files upgraded) rather "
        "than with `pandas.read_parquet`, which does not upgrade."),
        "",
        "| column | type | meaning |",
        "|---|---|---|",
    ]
    lines += [f"| `{name}` | {dtype} | {_cell(meaning)} |" for name, (dtype, meaning) in COLUMNS.items()]
    lines += [
        "",
        "## Older files",
        "",
        ("Changing, adding, removing or reordering a column bumps `SCHEMA_VERSION` and adds an upgrade step, so "
        "files written by older versions stay readable; a file of a newer version than the installed harness is "
        "refused in one line. What each step fills in for the rows of an older file:"),
        "",
    ]
    lines += [f"- **v{version} to v{version + 1}:** {_cell(inspect.getdoc(step) or '')}"
              for version, step in sorted(UPGRADES.items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    """Rewrite the page (or the path given) and say where."""
    path = Path(argv[0]) if argv else PAGE
    path.write_text(schema_markdown(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
