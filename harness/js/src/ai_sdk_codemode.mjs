// The ai-sdk-codemode arm's command: the Vercel AI SDK's code mode (@ai-sdk/code-mode: QuickJS compiled to
// WebAssembly, in a worker thread) as the only tool of the shared agent (agent.mjs). The task comes on stdin, the
// key in $HARNESS_API_KEY; each program run is appended as a JSON line to $HARNESS_WORKDIR/code-events.jsonl; the
// answer is printed on stdout.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { experimental_createCodeModeTool as createCodeModeTool } from "@ai-sdk/code-mode";
import { runAgent } from "./agent.mjs";

const task = JSON.parse(readFileSync(0, "utf8"));
const settings = JSON.parse(readFileSync(join(task.workdir, "codemode.json"), "utf8"));
const events = join(task.workdir, "code-events.jsonl");
const report = (event) => appendFileSync(events, JSON.stringify(event) + "\n");
const codeTool = (mcpTools) => ["code_mode", createCodeModeTool(mcpTools, {
  executionPolicy: { timeoutMs: settings.code_timeout_ms } }), "js"];
report({ kind: "startup", duration_s: process.uptime() });  // Node started and the packages imported
const answer = await runAgent(task, process.env.HARNESS_API_KEY, codeTool, report);
process.stdout.write(answer ?? "");
process.exit(0);  // the QuickJS worker threads would keep the process alive
