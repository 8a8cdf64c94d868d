"""Ids are looked up, never guessed: which arguments are ids, and when an id counts as seen."""

from harness.mcp.provenance import SeenValues, id_values


def test_id_parameters_are_id_and_names_ending_in_id_or_ids():
    arguments = {"customer_id": "C-1", "id": "X-2", "ticket_ids": ["T-3", "T-4"], "query": "C-5", "idle": "no",
                 "limit": 10, "order_id": None}
    assert list(id_values(arguments)) == [("customer_id", "C-1"), ("id", "X-2"), ("ticket_ids", "T-3"),
                                          ("ticket_ids", "T-4")]


def test_an_id_in_the_task_or_in_a_result_is_seen():
    seen = SeenValues("In which country is customer C-0007?")
    seen.see('[{"id":"C-0041","name":"Ana"}]')
    assert seen.unseen_id({"customer_id": "C-0007"}) is None
    assert seen.unseen_id({"customer_id": "C-0041", "body": "hi"}) is None


def test_an_id_seen_nowhere_is_a_guess():
    seen = SeenValues("Attach a note to the customer who placed order O-00112.")
    assert seen.unseen_id({"customer_id": "C-00112", "body": "VIP"}) == ("customer_id", "C-00112")


def test_part_of_a_longer_id_is_not_seen():
    seen = SeenValues("customer C-0012")
    assert seen.unseen_id({"customer_id": "C-001"}) == ("customer_id", "C-001")
    assert seen.unseen_id({"customer_id": "C-0012"}) is None


def test_non_id_arguments_are_never_checked():
    assert SeenValues("").unseen_id({"query": "Chen Tanaka", "status": "shipped", "limit": 100}) is None
