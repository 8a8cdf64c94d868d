"""What a newcomer copies from the README or a docs page works as shown: every Python and shell block of README.md
and docs/*.md runs, page by page in a fresh folder, when it can run offline (a scripted model, fixture servers), and
is otherwise checked against the CLI and the public API and listed with the reason it is not run
(tests/doc_examples.py says how a page marks a block)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT, harness
from tests.doc_examples import (
    PAGES,
    SHELL,
    Block,
    blocks,
    check_command,
    check_python,
    expand,
    python_not_run,
    reads_missing_results,
    setup_commands,
    why_not_run,
)

RUN_TIMEOUT_S = 600


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def not_run(block: Block) -> list[tuple[str, str]]:
    """(what, why) for each part of a block that is not run."""
    if block.language == "python":
        reason = python_not_run(block)
        return [("python block", reason)] if reason else []
    if block.language in SHELL:
        return [(" ".join(command), block.not_run or why_not_run(command)) for command in block.commands()
                if block.not_run or why_not_run(command)]
    return []


def runnable_pages() -> list[Path]:
    """The pages with at least one block or command that runs."""
    return [page for page in PAGES if any(
        (b.language == "python" and not b.file and not python_not_run(b))
        or (b.language in SHELL and not b.not_run and any(why_not_run(c) is None for c in b.commands()))
        for b in blocks(page))]


def test_every_page_with_code_is_read_and_some_blocks_run():
    examples = [b for page in PAGES for b in blocks(page) if b.language in (*SHELL, "python")]
    assert len(examples) > 50
    assert {page_id(p) for p in runnable_pages()} >= {"README.md", "docs/your-agent.md", "docs/running.md"}


def test_the_blocks_not_run_are_listed_each_with_its_reason():
    """The list is this test's output: `pytest tests/test_docs_examples.py -k listed -rP` shows it."""
    listed = [(block.where, what, why) for page in PAGES for block in blocks(page) for what, why in not_run(block)]
    print(f"{len(listed)} example(s) not run:")
    for where, what, why in listed:
        print(f"  {where}: {what[:90]}  -- {why}")
    assert listed and all(why.strip() for _, _, why in listed)
    marked = [b for page in PAGES for b in blocks(page) if b.not_run is not None]
    assert all(b.not_run for b in marked), "a <!-- not run: --> marker without a reason"


def test_no_block_runs_a_program_this_test_does_not_know():
    unknown = [f"{block.where}: {' '.join(command)}" for page in PAGES for block in blocks(page)
               if block.language in SHELL and not block.not_run for command in block.commands()
               if "a program this test does not run" in (why_not_run(command) or "")]
    assert unknown == [], "mark these blocks <!-- not run: REASON --> or teach tests/doc_examples.py the program"


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_command_and_python_block_of_a_page_is_checked_against_the_cli_and_the_api(page):
    for block in blocks(page):
        if block.language == "python":
            check_python(block.body, block.where)
        elif block.language in SHELL:
            for command in block.commands():
                check_command(command)


def test_the_check_refuses_an_unknown_option_and_an_unknown_api_name():
    with pytest.raises(Exception, match="No such option"):
        check_command(["harness", "run", "--suite", "smoke", "--no-such-option"])
    with pytest.raises(AssertionError, match="harness.evaluat is not in the public API"):
        check_python("import harness\nharness.evaluat('smoke')", "x.md:1")
    with pytest.raises(AssertionError, match="unexpected keyword argument 'timout_s'"):
        check_python("import harness\nharness.Limits(timout_s=300)", "x.md:1")
    with pytest.raises(AssertionError, match="harness.agents.scaffold has no Scafold"):
        check_python("from harness.agents.scaffold import Scafold", "x.md:1")


def run_python(block: Block, folder: Path) -> None:
    script = folder / f"_example_{block.line}.py"
    script.write_text(block.body)
    done = subprocess.run([sys.executable, script.name], cwd=folder, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert done.returncode == 0, f"{block.where}\n{block.body}\n{done.stdout}\n{done.stderr}"


def run_harness(command: list[str], folder: Path, where: str) -> None:
    args = expand(command, folder)[1:]
    done = harness(*args, cwd=folder, env={"PYTHONPATH": str(ROOT)}, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, f"{where}: {' '.join(command)}\n{done.stdout}\n{done.stderr}"


@pytest.mark.cli
@pytest.mark.sandbox
@pytest.mark.parametrize("page", runnable_pages(), ids=page_id)
def test_the_blocks_of_a_page_that_can_run_offline_run_as_shown(page, tmp_path, capsys):
    """In one folder per page, in the page's order: files it shows are written, Python blocks run, shell commands
    run; a command that reads results only a run not made here (an earlier `harness run` or a benchmark script that is not
    run) would have written is checked instead."""
    for command in setup_commands(page):
        run_harness(command, tmp_path, f"{page_id(page)} (setup)")
    skipped_before = False
    for block in blocks(page):
        if block.file:
            (tmp_path / block.file).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / block.file).write_text(block.body)
        elif block.language == "python":
            if python_not_run(block):
                continue
            run_python(block, tmp_path)
        elif block.language in SHELL and not block.not_run:
            for command in block.commands():
                if why_not_run(command):
                    skipped_before = skipped_before or command[:1] == ["python"] or command[1:2] in (["run"],
                                                                                                      ["optimize"])
                    continue
                missing = reads_missing_results(command, tmp_path)
                if missing:
                    assert skipped_before, f"{block.where}: {' '.join(command)} reads {missing}, which no command " \
                                           "before it on the page made"
                    check_command(command)
                    continue
                run_harness(command, tmp_path, block.where)
