"""Stage 5, running a suite: the runner drives each (task, arm, epoch) sample through an agent, scores it and
appends one row to the versioned results file (`records`); a run resumes, stops cleanly, and can spread over a Ray
cluster (`executors`, `ray_cluster`). Reference solutions run here too (`reference`, `validate`)."""
