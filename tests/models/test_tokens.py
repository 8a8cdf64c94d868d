"""The model-independent split of a prompt's tokens: tool definitions, tool results, the rest."""

from harness.models.tokens import count_tokens, split_prompt

STUB = 'def get_customer(customer_id: str) -> dict:\n    """Fetch one customer by its id."""'
RESULT = "{'id': 'C-0007', 'name': 'Chen Tanaka', 'country': 'IN'}"


def test_definitions_results_and_the_rest_add_up_to_the_prompt():
    prompt = f"Solve the task.\n{STUB}\nOutput:\n{RESULT}"
    split = split_prompt(prompt, (STUB,), (RESULT,))
    assert split.tool_definitions == count_tokens(STUB) and split.tool_results == count_tokens(RESULT)
    assert split.total == count_tokens(prompt)


def test_documentation_printed_in_an_observation_counts_as_a_definition_and_not_again_as_a_result():
    observation = f"{STUB}\n{RESULT}"
    split = split_prompt(f"Solve the task.\nOutput:\n{observation}", (STUB,), (observation,))
    assert split.tool_definitions == count_tokens(STUB)
    assert split.tool_results == count_tokens(observation) - count_tokens(STUB)
