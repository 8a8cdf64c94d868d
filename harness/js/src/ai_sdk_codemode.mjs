// The ai-sdk-codemode arm's command: the Vercel AI SDK's code mode (@ai-sdk/code-mode: QuickJS compiled to
// WebAssembly, in a worker thread) as the only tool of the shared agent (agent.mjs). The task comes on stdin, the
// key in $HARNESS_API_KEY; each program run is appended as a JSON line to $HARNESS_WORKDIR/code-events.jsonl; the
// answer is printed on stdout.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { experimental_createCodeModeTool as createCodeModeTool } from "@ai-sdk/code-mode";
import { Agent, fetch as undiciFetch } from "undici";
import { runAgent } from "./agent.mjs";

const task = JSON.parse(readFileSync(0, "utf8"));
const settings = JSON.parse(readFileSync(join(task.workdir, "codemode.json"), "utf8"));
const events = join(task.workdir, "code-events.jsonl");
const report = (event) => appendFileSync(events, JSON.stringify(event) + "\n");
const codeTool = (mcpTools) => ["code_mode", createCodeModeTool(mcpTools, {
  executionPolicy: { timeoutMs: settings.code_timeout_ms } }), "js"];
report({ kind: "startup", duration_s: process.uptime() });  // Node started and the packages imported
// Node's fetch gives up on a response whose headers take 300 s; the run's model may well take longer (an embedded
// model on a busy machine): the run's own time limit bounds the wait instead
const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
const fetchFn = (url, init) => undiciFetch(url, { ...init, dispatcher });
try {
  const answer = await runAgent(task, process.env.HARNESS_API_KEY, codeTool, report, fetchFn);
  process.stdout.write(answer ?? "");
  process.exit(0);  // the QuickJS worker threads would keep the process alive
} catch (error) {  // one line for the run's error, not Node's dump of the error object
  const cause = error?.cause ? ` (${error.cause.message ?? error.cause})` : "";
  process.stderr.write(`${error?.name ?? "Error"}: ${error?.message ?? error}${cause}\n`);
  process.exit(1);
}
