"""The Python API takes a path the way a user writes it: `out_dir="results"` as well as a Path."""

import harness
from harness.tasks.task import Task


def test_evaluate_takes_out_dir_as_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    task = Task(id="country", prompt="In which country is customer C-0007?", expected="IN", servers=["crm"],
                scorer="exact")
    result = harness.evaluate([task], model="scripted:garbage", arms=["direct"], out_dir="results")
    assert result.path.resolve().is_relative_to(tmp_path / "results") and len(result.frame) == 1
