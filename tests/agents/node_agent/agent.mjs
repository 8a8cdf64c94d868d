// A team's agent in another language, as a `cmd:` arm: the run's model through the official `openai` package, the
// run's servers through the official MCP TypeScript SDK, both from the environment the harness sets; the answer on
// stdout, logs on stderr.
import OpenAI from "openai";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = process.env;
const headers = { Authorization: `Bearer ${env.HARNESS_API_KEY}` };
const mcp = new Client({ name: "node-agent", version: "1.0.0" });
await mcp.connect(new StreamableHTTPClientTransport(new URL(env.HARNESS_MCP_URL), { requestInit: { headers } }));
const { tools } = await mcp.listTools();
const model = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY });
const offered = tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description ?? "",
                                                                  parameters: t.inputSchema } }));
const messages = [{ role: "user", content: env.HARNESS_TASK_PROMPT }];
let answer = "";
for (let turn = 0; turn < Number(env.HARNESS_MAX_TURNS); turn++) {
  const reply = await model.chat.completions.create({ model: env.HARNESS_MODEL, messages, tools: offered });
  const message = reply.choices[0].message;
  if (!message.tool_calls || message.tool_calls.length === 0) { answer = message.content ?? ""; break; }
  messages.push(message);
  for (const call of message.tool_calls) {
    const result = await mcp.callTool({ name: call.function.name, arguments: JSON.parse(call.function.arguments || "{}") });
    const text = result.content.filter((part) => part.type === "text").map((part) => part.text).join("\n");
    console.error(`called ${call.function.name}`);
    messages.push({ role: "tool", tool_call_id: call.id, content: text });
  }
}
await mcp.close();
process.stdout.write(answer);
