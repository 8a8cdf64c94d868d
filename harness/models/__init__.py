"""Stage 3, the model: model strings to dspy.LM through one engine stack (LiteLLM, the embedded llama.cpp model,
scripted test models), with the response cache, grammars, token counting and prices."""
