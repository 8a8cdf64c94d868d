"""The arms: agents built on one loop (`loop.run_loop`), declared once in `arms.ARMS`.

- loop.py: the contract every arm runs (turns, answers from the agent's own action, observation limits,
  repeats, error kinds);
- scaffold.py: the Scaffold, every rule beyond the task and its tools (presets plain and guided), which the
  loop, the arms, the sandbox and the id guard read;
- chat.py: multi-turn chat protocols as DSPy adapters (code blocks; native tool calls);
- direct.py, codemode.py, react.py: one arm each (its step predictor, its policy, its agent);
- arms.py: the registry the runner, optimizer, CLI, reports, figures and viewer read (nothing else names an arm);
- base.py: AgentResult and Step, what the runner turns into a row and a trajectory.
"""
