"""The gate's false-alarm rate and power on a seeded simulation small enough for CI (benchmarks/gate_noise.py
measures them on 1,000 pairs): rows drawn by the noisy model's draws, judged by the real gate."""

from harness.analysis.gate import GateRule
from harness.analysis.simulate import gate_trials, simulated_runs
from harness.models.noisy import parse_noisy

MIXTURE = parse_noisy("scripted:noisy:p=0.5@0.95+0.3@0.6+0.2@0.1")  # the agent: ~23% of tasks flip


def test_simulated_runs_are_the_noisy_models_draws():
    spec = parse_noisy("scripted:noisy:p=0.5,seed=4")
    runs = simulated_runs(spec, 5, 2, "r")
    assert len(runs) == 10 and list(runs["success"]) == [
        spec.succeeds(f"task-{t:04d}", "direct", f"epoch={e}") for t in range(5) for e in range(2)]


def test_an_unchanged_agent_fails_the_gate_at_most_alpha_of_the_time_and_the_measured_drop_rule_far_more():
    # 100 A/A pairs of 20 tasks: alpha 0.05 allows ~5 false alarms; 10 would be twice that
    significant = gate_trials(MIXTURE, 20, 1, 100, GateRule(max_drop=0.05))
    measured = gate_trials(MIXTURE, 20, 1, 100, GateRule(max_drop=0.05, rule="measured-drop"))
    assert significant.failures <= 10 and measured.failures >= 15
    assert significant.true_drop == 0


def test_a_drop_as_large_as_the_stated_detectable_one_fails_the_gate_most_of_the_time():
    spec = parse_noisy("scripted:noisy:p=0.5@0.8+0.5@0.5")  # no chance near 0 or 1: a shift is the true drop
    rule = GateRule(max_drop=0.05)
    stated = gate_trials(spec, 20, 3, 20, rule).mean_detectable
    found = gate_trials(spec, 20, 3, 60, rule, drop=stated, first_seed=10_000)
    assert abs(found.true_drop - stated) < 1e-9
    assert 0.6 <= found.failure_rate <= 0.97  # 80% nominal, over 60 pairs
