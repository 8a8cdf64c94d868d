// The agent both JavaScript code-mode arms share, as the AI SDK's documentation builds one: the run's model through
// @ai-sdk/openai-compatible at the run's endpoint, the run's servers through the AI SDK's MCP client (streamable
// HTTP, the run's key as a bearer header), ONE code tool made from those tools by the code-mode package (its own
// description, with the TypeScript declarations it generates), and generateText's loop with the task's system
// instructions and the run's turn limit as its step limit. Each program the code tool runs is reported through
// `report` (code, output, error, its time) as it ends; the package's own error text is what the model sees.
import { createMCPClient } from "@ai-sdk/mcp";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount } from "ai";

export const STEP_LIMIT_MESSAGE = "the agent reached its step limit";

// The code tool's run, timed and reported, its result or error passed on unchanged to the loop.
function reported(tool, codeField, report) {
  const execute = tool.execute;
  return {
    ...tool,
    execute: async (input, options) => {
      const started = Date.now();
      const code = String(input?.[codeField] ?? "");
      report({ kind: "code_started", code, tool_call_id: options?.toolCallId ?? "" });
      try {
        const value = await execute(input, options);
        report({ code, output: JSON.stringify(value ?? null), error: null, duration_s: (Date.now() - started) / 1000,
                 tool_call_id: options?.toolCallId ?? "" });
        return value;
      } catch (error) {
        report({ code, output: "", error: String(error?.message ?? error), duration_s: (Date.now() - started) / 1000,
                 tool_call_id: options?.toolCallId ?? "" });
        throw error;
      }
    },
  };
}

// One run (one user turn, in a conversation): `task` as the harness hands it (prompt, system_instructions, base_url,
// model, mcp_url, max_turns, history) with its key; `codeTool(mcpTools)` -> [name, tool, field]: the arm's code tool
// over the MCP tools. Returns the answer.
export async function runAgent(task, key, codeTool, report, fetchFn) {
  const headers = { Authorization: `Bearer ${key}` };
  const transport = { type: "http", url: task.mcp_url, headers, redirect: "follow", ...(fetchFn ? { fetch: fetchFn } : {}) };
  const client = await createMCPClient({ transport });
  try {
    const mcpTools = await client.tools();
    const [name, tool, field] = codeTool(mcpTools);
    report({ kind: "tools", name, description: tool.description });
    const provider = createOpenAICompatible({ name: "harness", baseURL: task.base_url, apiKey: key,
                                              ...(fetchFn ? { fetch: fetchFn } : {}) });
    const result = await generateText({
      model: provider.chatModel(task.model),
      ...(task.system_instructions ? { system: task.system_instructions } : {}),
      // a later user turn of a conversation: the earlier turns' messages (text only), then this turn's
      prompt: task.history?.length ? [...task.history, { role: "user", content: task.prompt }] : task.prompt,
      tools: { [name]: reported(tool, field, report) },
      stopWhen: isStepCount(task.max_turns),
      maxRetries: 0,
    });
    if (result.finishReason === "tool-calls" && result.steps.length >= task.max_turns) {
      // generateText stopped at its step limit while the model still called the code tool: no answer
      throw new Error(`${STEP_LIMIT_MESSAGE} (${task.max_turns} steps) without an answer`);
    }
    return result.text;
  } finally {
    await client.close();
  }
}
