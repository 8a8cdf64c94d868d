// The cloudflare-codemode arm's command: starts workerd with the agent's Worker (worker.mjs, bundled as worker.js
// beside workerd.capnp) on a free loopback port, posts it the task (stdin) and the run's key ($HARNESS_API_KEY),
// appends each event it streams back to $HARNESS_WORKDIR/code-events.jsonl as it comes, prints the answer on
// stdout. workerd is this process's child, in the run's process group, and is ended with it.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const START_TIMEOUT_MS = 20_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForWorker(url, workerd, started) {
  while (Date.now() - started < START_TIMEOUT_MS) {
    if (workerd.exitCode !== null) throw new Error(`workerd exited with ${workerd.exitCode} before serving`);
    try {
      await fetch(url, { method: "GET" });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error(`workerd did not serve ${url} within ${START_TIMEOUT_MS / 1000} s`);
}

const task = JSON.parse(readFileSync(0, "utf8"));
const settings = JSON.parse(readFileSync(join(task.workdir, "codemode.json"), "utf8"));
const events = join(task.workdir, "code-events.jsonl");
const record = (event) => appendFileSync(events, JSON.stringify(event) + "\n");
const port = await freePort();
const started = Date.now();
const workerd = spawn(join(here, "..", "node_modules", ".bin", "workerd"),
  ["serve", join(here, "workerd.capnp"), "--experimental", "--socket-addr", `http=127.0.0.1:${port}`],
  { stdio: ["ignore", "ignore", "pipe"] });
let stderr = "";
workerd.stderr.on("data", (chunk) => { stderr = (stderr + chunk).slice(-4000); });
const url = `http://127.0.0.1:${port}/`;
let answer = null;
let failure = null;
try {
  await waitForWorker(url, workerd, started);
  record({ kind: "startup", duration_s: (Date.now() - started) / 1000 });
  const response = await fetch(url, { method: "POST", body: JSON.stringify({ task, key: process.env.HARNESS_API_KEY,
                                                                            settings }) });
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      if ("event" in line) record(line.event);
      else if ("answer" in line) answer = line.answer;
      else if ("error" in line) failure = line.error;  // (and {"alive": true}: the Worker is still at work)
    }
  }
  if (answer === null && failure === null) failure = `the Worker ended without an answer (workerd: ${stderr.trim()})`;
} catch (error) {
  failure = `${error?.message ?? error}${stderr ? ` (workerd: ${stderr.trim()})` : ""}`;
} finally {
  workerd.kill("SIGKILL");
}
if (failure !== null) {
  process.stderr.write(failure + "\n");
  process.exit(1);
}
process.stdout.write(answer ?? "");
