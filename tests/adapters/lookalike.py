"""A tiny checkout in M3ToolEval's layout, written by the tests (nothing of the real benchmark is copied): two
task families, one with plain and `*args` tools, one whose tools are methods of a stateful object built by a
factory and reading a data file beside its module. Its `tasks` package imports tqdm and, through its REPL module,
IPython, as the real one does."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.models.scripted import Policy
from harness.run.reference import ReferenceTrace, reference_policy
from harness.tasks.task import Task

FOLDER = Path("scripts/eval/m3tooleval")

BASE = '''
from collections import namedtuple
from tqdm import tqdm
from .repl import PythonREPL

ToolType = namedtuple("ToolType", ["name", "description", "function", "fn_signature"])
task_iterators = []


class Task:
    def __init__(self, name, tools, instruction, expected_output):
        self.name = name
        self.tools = tools() if callable(tools) else tools
        self.instruction = instruction
        self.expected_output = expected_output
        print(f"Task: {name}")


def register_task_iterator(tasks, length):
    task_iterators.append((tasks, length))


def get_task_iterator():
    for tasks, _ in task_iterators:
        yield from tasks
'''

REPL = '''
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils import io


class PythonREPL:
    shell = InteractiveShell
'''

UNIT_CONVERTER = '''
from ..base import Task, ToolType, register_task_iterator


def to_celsius(fahrenheit):
    return (float(fahrenheit) - 32) * 5 / 9


def largest(*values):
    return max(values)


TOOLS = {
    "to_celsius": ToolType("to_celsius", "Converts Fahrenheit to Celsius. Arguments: fahrenheit (float)",
                           to_celsius, "to_celsius(fahrenheit: float) -> float"),
    "largest": ToolType("largest", "The largest of the given numbers.", largest, "largest(*values: float) -> float"),
}
TASKS = [
    Task("unit_converter/boiling_point", TOOLS, "Convert 212 degrees Fahrenheit to Celsius.", 100.0),
    Task("unit_converter/largest_of_three", TOOLS, "Which number is the largest: 3, 11 or 7?", 11),
]
register_task_iterator(TASKS, len(TASKS))
'''

LIBRARY_SHELF = '''
import json
import os

from ...base import Task, ToolType, register_task_iterator

with open(os.path.join(os.path.dirname(__file__), "shelf.json")) as f:
    TITLES = json.load(f)


class Shelf:
    def __init__(self, titles):
        self.titles = titles
        self.position = 0

    def next_book(self):
        self.position += 1
        return self.titles[self.position - 1] if self.position <= len(self.titles) else "[End of shelf.]"


def create_tools():
    shelf = Shelf(TITLES)
    return {"next_book": ToolType("next_book", "Takes the next book from the shelf and returns its title.",
                                  shelf.next_book, "next_book() -> str")}


TASKS = [
    Task("library_shelf/second_title", create_tools, "What is the title of the second book on the shelf?", "Dune"),
    Task("library_shelf/first_two", create_tools, "List the titles of the first two books on the shelf.",
         ["Emma", "Dune"]),
]
register_task_iterator(TASKS, len(TASKS))
'''

# The benchmark's runner in the real one's shape (its command line, its JSONL output), with a deterministic "model"
# instead of an API: it answers unit_converter tasks right at once, and on library_shelf tasks calls the tool once
# and then answers wrong until the turn limit, told each time that the answer is incorrect. It imports the Gemini
# module the real one imports, which only the comparison's stand-in provides.
MAIN = '''
import argparse
import json
import os
import pathlib
import re

import google.generativeai as genai
from tasks import get_task_iterator

parser = argparse.ArgumentParser()
parser.add_argument("--model", type=str)
parser.add_argument("--action_mode", type=str, default="text_as_action")
parser.add_argument("--output_dir", type=str, default="outputs")
parser.add_argument("--task_regex_filter", type=str, default=None)
parser.add_argument("--n_tasks", type=int, default=None)
parser.add_argument("--n_turns_limit", type=int, default=10)
args = parser.parse_args()
assert os.environ["OPENAI_API_BASE"] and os.environ["OPENAI_API_KEY"]
ACTIONS = {"json_as_action": 'Action: {"tool": "next_book", "args": []} End Action',
           "code_as_action": "Action:\\nnext_book()\\nEnd Action", "text_as_action": "Action: next_book End Action"}


def run_task(task):
    messages = [{"role": "user", "content": task.instruction}]
    if task.name.startswith("unit_converter/"):
        messages.append({"role": "assistant", "content": f"Answer: {task.expected_output}"})
        return messages, True, 1
    messages.append({"role": "assistant", "content": ACTIONS[args.action_mode]})
    messages.append({"role": "user", "content": str(task.tools["next_book"].function())})
    for _ in range(args.n_turns_limit - 1):
        messages.append({"role": "assistant", "content": "Answer: unknown"})
        messages.append({"role": "user", "content": "incorrect"})
    return messages, False, args.n_turns_limit


out = pathlib.Path(args.output_dir) / args.model
out.mkdir(parents=True, exist_ok=True)
with open(out / f"{args.action_mode}.json", "a") as handle:
    for task in get_task_iterator():
        if args.task_regex_filter and not re.search(args.task_regex_filter, task.name):
            continue
        messages, correct, turns = run_task(task)
        handle.write(json.dumps({"task_name": task.name, "action_mode": args.action_mode, "messages": messages,
                                 "expected_output": task.expected_output, "is_correct": correct, "n_turns": turns,
                                 "end_reason": "correct" if correct else "limit"}) + "\\n")
'''

FILES = {
    "tasks/__init__.py": ("from .base import Task, ToolType, get_task_iterator\n"
                          "from .impl import unit_converter, library_shelf\n"),
    "tasks/base.py": BASE,
    "tasks/repl.py": REPL,
    "tasks/impl/__init__.py": "",
    "tasks/impl/unit_converter.py": UNIT_CONVERTER,
    "tasks/impl/library_shelf/__init__.py": LIBRARY_SHELF,
    "tasks/impl/library_shelf/shelf.json": '["Emma", "Dune", "Ulysses"]\n',
    "main.py": MAIN,
}


# What the look-alike's REPL module imports, for running its main.py with the harness's own interpreter (the real
# one runs in a venv with IPython installed).
IPYTHON_STAND_IN = {"IPython/__init__.py": "", "IPython/core/__init__.py": "", "IPython/utils/__init__.py": "",
                    "IPython/core/interactiveshell.py": "InteractiveShell = object\n", "IPython/utils/io.py": ""}


def write_ipython_stand_in(folder: Path) -> Path:
    """A folder to put on PYTHONPATH in which `IPython` is a stand-in package."""
    for name, text in IPYTHON_STAND_IN.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def write_lookalike(root: Path) -> Path:
    """Write the look-alike checkout under `root` (as a code-act checkout) and return `root`."""
    for name, text in FILES.items():
        path = root / FOLDER / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"))
    return root


SOLUTIONS = {  # task id -> (code that solves it, its tool calls, its answer)
    "unit_converter/boiling_point": ("print(to_celsius(fahrenheit=212))", (("to_celsius", {"fahrenheit": 212}),),
                                     "100.0"),
    "unit_converter/largest_of_three": ("print(largest(values=[3, 11, 7]))", (("largest", {"values": [3, 11, 7]}),),
                                        "11"),
    "library_shelf/second_title": ("next_book()\nprint(next_book())", (("next_book", {}), ("next_book", {})), "Dune"),
    "library_shelf/first_two": ("print([next_book(), next_book()])", (("next_book", {}), ("next_book", {})),
                                "['Emma', 'Dune']"),
}


def solving_policy(task: Task, arm: str) -> Policy:
    """A scripted model that solves each look-alike task through the arm's own protocol (its tool calls, or its
    code in code mode), the way `scripted:reference` replays a reference solution."""
    code, calls, answer = SOLUTIONS[task.id]
    return reference_policy(ReferenceTrace(answer, answer, calls, {}), dataclasses.replace(task, reference=code), arm)
