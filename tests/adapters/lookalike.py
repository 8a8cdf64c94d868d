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

FILES = {
    "tasks/__init__.py": "from .base import Task, ToolType\nfrom .impl import unit_converter, library_shelf\n",
    "tasks/base.py": BASE,
    "tasks/repl.py": REPL,
    "tasks/impl/__init__.py": "",
    "tasks/impl/unit_converter.py": UNIT_CONVERTER,
    "tasks/impl/library_shelf/__init__.py": LIBRARY_SHELF,
    "tasks/impl/library_shelf/shelf.json": '["Emma", "Dune", "Ulysses"]\n',
}


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
