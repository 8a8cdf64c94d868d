"""What a newcomer copies from the README or a docs page works as shown: every Python and shell block of README.md
and docs/*.md runs, page by page in a fresh folder, when it can run offline (a scripted model, fixture servers), and
is otherwise checked against the CLI and the public API and listed with the reason it is not run
(tests/doc_examples.py says how a page marks a block)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
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


def folder_state(folder: Path) -> tuple[tuple[str, str], ...]:
    """Every file below the folder with its content's hash: all that a command run there can read of it."""
    return tuple(sorted((str(path.relative_to(folder)), hashlib.sha256(path.read_bytes()).hexdigest())
                        for path in folder.rglob("*") if path.is_file()))


class CommandRuns:
    """The harness commands of every page, each run once per session on the same files: a page that shows a command
    another page (or block) already ran on the same folder contents (the README's first run on exports.md, `harness
    servers --check` twice on servers.md) gets a copy of the files that run wrote, since the same program on the
    same inputs checks nothing new. A folder that differs in any file (results with their own timestamps) runs it.
    Pages run at once: a page that needs a run another page is making waits for it."""

    def __init__(self) -> None:
        self.written: dict[tuple, dict[str, bytes]] = {}
        self.locks: dict[tuple, threading.Lock] = {}
        self.guard = threading.Lock()

    def run(self, command: list[str], folder: Path, where: str) -> None:
        before = folder_state(folder)
        key = (tuple(command), before)
        with self.guard:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self.written:
                run_harness(command, folder, where)
                old = dict(before)
                self.written[key] = {name: (folder / name).read_bytes() for name, digest in folder_state(folder)
                                     if old.get(name) != digest}
                return
        for name, data in self.written[key].items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)


def run_page(page: Path, folder: Path, runs: CommandRuns) -> None:
    """In the page's folder, in the page's order: files it shows are written, Python blocks run, shell commands run;
    a command that reads results only a run not made here (an earlier `harness run` or a benchmark script that is not
    run) would have written is checked instead."""
    for command in setup_commands(page):
        runs.run(command, folder, f"{page_id(page)} (setup)")
    skipped_before = False
    for block in blocks(page):
        if block.file:
            (folder / block.file).parent.mkdir(parents=True, exist_ok=True)
            (folder / block.file).write_text(block.body)
        elif block.language == "python":
            if python_not_run(block):
                continue
            run_python(block, folder)
        elif block.language in SHELL and not block.not_run:
            for command in block.commands():
                if why_not_run(command):
                    skipped_before = skipped_before or command[:1] == ["python"] or command[1:2] in (["run"],
                                                                                                      ["optimize"])
                    continue
                missing = reads_missing_results(command, folder)
                if missing:
                    assert skipped_before, f"{block.where}: {' '.join(command)} reads {missing}, which no command " \
                                           "before it on the page made"
                    check_command(command)
                    continue
                runs.run(command, folder, block.where)


# Pages run two at a time, each in its own folder: the CI machine has two cores, and a page's commands leave one
# mostly idle (process start-up, a sandbox's boot), so the pages together take about half as long. Each page's
# commands are separate `harness` processes (~0.3 GB each); their ports are chosen free, and the harness cache they
# share is read-only for them (Pyodide, the npm packages) or written per run (logs).
PAGES_AT_ONCE = 2
PAGE_TEST = "test_the_blocks_of_a_page_that_can_run_offline_run_as_shown"


@pytest.fixture(scope="module")
def page_outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Every page this session selected, started together on first use; each page's test waits for its own."""
    import harness.cli  # noqa: F401  imported once here, not by two pages' checks at once

    pages = [item.callspec.params["page"] for item in request.session.items
             if item.module is request.module and getattr(item, "originalname", None) == PAGE_TEST]
    runs = CommandRuns()
    pool = ThreadPoolExecutor(PAGES_AT_ONCE, thread_name_prefix="docs-page")
    outcomes = {page: pool.submit(run_page, page, tmp_path_factory.mktemp(page.stem), runs) for page in pages}
    yield outcomes
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.cli
@pytest.mark.sandbox
@pytest.mark.parametrize("page", runnable_pages(), ids=page_id)
def test_the_blocks_of_a_page_that_can_run_offline_run_as_shown(page, page_outcomes):
    """Each page that can run, run as run_page says."""
    page_outcomes[page].result()
