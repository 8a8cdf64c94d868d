"""inspect_ai side of benchmarks/vs_inspect.py (runs in .venv-bench, where inspect_ai is installed).

The same trivial tool-using task as ours: one tool call (a customer lookup), then the answer, scored by
exact match, with inspect's `mockllm` model scripted to call the tool and answer. Prints JSON.
"""

import json
import sys
import tempfile
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

CUSTOMERS = {"C-0007": {"id": "C-0007", "name": "Chen Tanaka", "country": "IN"}}


@tool
def get_customer():
    async def execute(customer_id: str):
        """Fetch one customer by id.

        Args:
            customer_id: the customer's id, e.g. C-0001
        """
        return json.dumps(CUSTOMERS[customer_id])

    return execute


def outputs(n: int):
    for _ in range(n):
        yield ModelOutput.for_tool_call("mockllm/model", "get_customer", {"customer_id": "C-0007"})
        yield ModelOutput.from_content("mockllm/model", "IN")


def main(samples: int, concurrency: int) -> None:
    task = Task(dataset=[Sample(input="In which country is customer C-0007? Two-letter code.", target="IN")
                         for _ in range(samples)],
                solver=[use_tools(get_customer()), generate()], scorer=match())
    model = get_model("mockllm/model", custom_outputs=outputs(samples))
    with tempfile.TemporaryDirectory() as logs:
        started = time.perf_counter()
        log = eval(task, model=model, max_samples=concurrency, log_dir=logs, display="none")[0]
        seconds = time.perf_counter() - started
        accuracy = log.results.scores[0].metrics["accuracy"].value if log.results else None
        completed = log.results.completed_samples if log.results else 0
    print(json.dumps({"samples": completed, "seconds": seconds, "accuracy": accuracy, "status": log.status}))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
