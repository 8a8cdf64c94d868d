// The cloudflare-codemode arm's Worker, run by workerd: Cloudflare's Code Mode (@cloudflare/codemode) as the only
// tool of the shared agent (agent.mjs), each program run in a Dynamic Worker through its DynamicWorkerExecutor and
// the Worker Loader binding (env.LOADER), as Cloudflare's documentation builds it. A POST of {task, key, settings}
// runs one task; the response streams one JSON line per event as it happens ({"event": ...}), then
// {"answer": ...} or {"error": ...}, with {"alive": true} lines meanwhile.
import { DynamicWorkerExecutor } from "@cloudflare/codemode";
import { createCodeTool } from "@cloudflare/codemode/ai";
import { runAgent } from "./agent.mjs";

const HEARTBEAT_MS = 10_000;

export default {
  async fetch(request, env) {
    if (request.method !== "POST") return new Response("ready");  // the launcher's readiness probe
    const { task, key, settings } = await request.json();
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    const send = (line) => writer.write(encoder.encode(JSON.stringify(line) + "\n"));
    const fetchFn = (...args) => fetch(...args);  // workerd's fetch, bound (a bare reference is an illegal invocation)
    const executor = new DynamicWorkerExecutor({ loader: env.LOADER, timeout: settings.code_timeout_ms });
    const codeTool = (mcpTools) => ["codemode", createCodeTool({ tools: mcpTools, executor }), "code"];
    // a line every few seconds while the model or a tool is slow: the launcher's fetch ends a silent body at 300 s
    const heartbeat = setInterval(() => send({ alive: true }), HEARTBEAT_MS);
    const run = async () => {
      try {
        send({ answer: await runAgent(task, key, codeTool, (event) => send({ event }), fetchFn) });
      } catch (error) {
        const cause = error?.cause ? ` (${error.cause.message ?? error.cause})` : "";
        send({ error: `${error?.name ?? "Error"}: ${error?.message ?? error}${cause}` });
      } finally {
        clearInterval(heartbeat);
        await writer.close();
      }
    };
    run();
    return new Response(readable, { headers: { "content-type": "application/x-ndjson" } });
  },
};
