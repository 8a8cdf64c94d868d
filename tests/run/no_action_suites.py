"""CRM tasks for the tests of the no-action check (tests/run/test_no_action.py calls it, tests/cli/test_validate_cli.py
runs `harness validate`): each written once here, and put together into a suite's text by the test that needs it."""

from __future__ import annotations


def churn_task(task_id: str, customer_id: str, name: str) -> str:
    """A write task: set a customer's status to churned, answer with its name; scored on the answer and the state."""
    return f"""
  - id: {task_id}
    category: write
    prompt: "Set the status of customer {customer_id} to churned. Answer with the customer's name."
    expected: {name}
    scorer:
      all:
        scorers:
          - exact
          - state: {{server: crm, collection: customers, where: {{id: {customer_id}, status: churned}}, count: 1}}
    reference: |
      print(update_customer_status(customer_id="{customer_id}", status="churned")["name"])
"""


# Its state check holds on the seed data (C-0003 is churned already): an agent that does nothing passes it.
CHURN_ALREADY_CHURNED = churn_task("churn-already-churned", "C-0003", "Rosa Abara")
CHURN_FOR_REAL = churn_task("churn-for-real", "C-0007", "Chen Tanaka")

ONLY_FORBIDS_A_CALL = """
  - id: only-forbids-a-call
    category: write
    prompt: "What is the country of C-0007? Do not change anything."
    expected: IN
    scorer: {all: {scorers: [exact, {tool_not_called: {tool: update_customer_status}}]}}
    reference: print(get_customer(customer_id="C-0007")["country"])
"""
COUNTRY = """
  - id: country
    category: lookup
    prompt: "What is the country of C-0007?"
    expected: IN
    scorer: exact
    reference: print(get_customer(customer_id="C-0007")["country"])
"""
# The warning line the check writes for CHURN_ALREADY_CHURNED (the reason after it may go on).
CHURNED_WARNING = ("warning: task 'churn-already-churned' can be passed without acting: the state check already holds "
                   "on the seed data")


def crm_suite(name: str, *tasks: str) -> str:
    """A suite file's text: the CRM fixture server and the given tasks, in order."""
    return f"suite: {name}\nservers: [crm]\ntasks:{''.join(tasks)}"
