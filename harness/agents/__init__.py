"""The arms: agents built on one loop (`loop.run_loop`), declared once in `arms.ARMS`.

- loop.py: the contract every arm runs (turns, answers from the agent's own action, observation limits,
  repeats, error kinds);
- chat.py: multi-turn chat protocols as DSPy adapters (code blocks; native tool calls);
- direct.py, codemode.py, react.py: one arm each (its step predictor, its policy, its agent);
- arms.py: the registry the runner, optimizer, CLI and reports read;
- base.py: AgentResult and Step, what the runner turns into a row and a trajectory.
"""
