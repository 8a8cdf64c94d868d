// The harness run viewer: a run table (#/?filters), a run page (#/run/ID) and a task page (#/task/ID?suite=S).
// Data arrives as scripts calling harnessData(key, value): data/runs.js at once, data/run/ID.js when a run's
// trajectory is first needed, so a results file with thousands of runs opens as fast as its table.
"use strict";

const state = { index: null, trajectories: new Map(), waiting: new Map() };
const FILTERS = [["run_id", "run"], ["suite", "suite"], ["arm", "arm"], ["model", "model"], ["program", "program"],
                 ["scaffold", "scaffold"], ["session", "session"], ["task_id", "task"], ["category", "category"], ["success", "result"], ["error_type", "error type"]];
const SORTS = { total_tokens: "tokens", cost_usd: "cost", latency_s: "latency", turns: "turns",
                llm_calls: "LM calls", tool_calls: "tool calls" };
let ARM_ORDER = [];  // the arm registry's order, sent with the runs (harness.agents.arms)
const app = () => document.getElementById("app");

function harnessData(key, value) {
  if (key === "runs") {
    state.index = value;
    ARM_ORDER = value.arms || [];
    value.rows.forEach((r) => { r.program = r.program_hash ? r.program_hash.slice(0, 8) : "built-in"; });
    const link = document.getElementById("report-link");
    if (value.report) { link.href = value.report; link.hidden = false; link.textContent = "report ↗"; }
    route();
    if (location.protocol !== "file:") { state.polling = setInterval(pollLive, 2000); pollLive(); }
    return;
  }
  if (key === "live") {  // `harness view`'s server: the rows as they are now and the runs in flight
    value.rows.forEach((r) => { r.program = r.program_hash ? r.program_hash.slice(0, 8) : "built-in"; });
    const seen = JSON.stringify([value.rows.map((r) => `${r.sample_id}:${r.error_type}`),
                                 (value.in_flight || []).map((r) => `${r.sample_id}:${r.events.length}`)]);
    state.index = value;
    state.inFlight = value.in_flight || [];
    if (seen !== state.liveSeen) {  // refresh the table in place (no scroll, no reload) when something changed
      state.liveSeen = seen;
      const { parts, params } = parseHash();
      if (parts[0] !== "run" && parts[0] !== "task") showTable(params);
    }
    return;
  }
  state.trajectories.set(key, value);
  (state.waiting.get(key) || []).forEach((w) => w.resolve(value));
  state.waiting.delete(key);
}

function pollLive() {  // a static copy has no live data: the first miss stops the polling
  const tag = document.createElement("script");
  tag.src = `data/live.js?t=${Date.now()}`;
  tag.onload = () => tag.remove();
  tag.onerror = () => { tag.remove(); clearInterval(state.polling); };
  document.head.appendChild(tag);
}

function inFlightHtml(runs) {
  if (!runs || !runs.length) return "";
  const event = (e) => `<li class="ev-${esc(e.event)}"><span class="muted">${secs(e.t)}${e.step != null ? ` · step ${e.step}` : ""}</span>
      <b>${esc(e.event)}</b>${e.cut_short ? ' <span class="tag err">cut short</span>' : ""} ${esc(e.text)}</li>`;
  return `<section class="inflight"><h2>In flight (${runs.length})</h2>${runs.map((r) => `
    <details open data-inflight="${esc(r.sample_id)}"><summary>${esc(r.task_id)} · ${esc(r.arm)} · ${esc(r.model)} ·
      epoch ${r.epoch} <span class="muted">${r.events.length} events so far</span></summary>
      <ol class="events">${r.events.map(event).join("")}</ol></details>`).join("")}</section>`;
}

function harnessFailed(what) {
  app().innerHTML = `<p class="errtext">Could not load ${esc(what)}.</p>`;
}

function loadRun(id) {
  const key = `run/${id}`;
  if (state.trajectories.has(key)) return Promise.resolve(state.trajectories.get(key));
  return new Promise((resolve, reject) => {
    if (!state.waiting.has(key)) {
      state.waiting.set(key, []);
      const tag = document.createElement("script");
      tag.src = `data/run/${id}.js`;
      tag.onerror = () => {
        (state.waiting.get(key) || []).forEach((w) => w.reject(new Error(`no trajectory file for run ${id}`)));
        state.waiting.delete(key);
      };
      document.head.appendChild(tag);
    }
    state.waiting.get(key).push({ resolve, reject });
  });
}

// ---- formatting ----
function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                                                          "'": "&#39;" })[c]);
}
const int = (n) => (n == null ? "—" : Number(n).toLocaleString("en-US"));
const secs = (s) => (s == null ? "—" : s < 1 ? `${Math.round(s * 1000)} ms` : `${Number(s).toFixed(s < 10 ? 2 : 1)} s`);
const usd = (c) => (c == null ? "unknown" : c === 0 ? "$0" : `$${Number(c).toFixed(c < 0.01 ? 5 : 4)}`);
const json = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 1));
const result = (r) => (r.success ? `<span class="pass">✓ pass</span>` : `<span class="fail">✗ fail</span>`);
const errorTag = (t) => (t ? `<span class="tag err">${esc(t)}</span>` : "");
const armRank = (arm) => { const i = ARM_ORDER.indexOf(arm); return i < 0 ? ARM_ORDER.length : i; };
function expected(r) { try { return json(JSON.parse(r.expected)); } catch { return r.expected; } }
function clip(text, n) { const s = String(text ?? ""); return s.length > n ? `${s.slice(0, n)}…` : s; }
function value(row, key) { return key === "success" ? (row.success ? "pass" : "fail") : String(row[key] ?? ""); }
// a session's tasks in the order they ran (harness.run.sessions), then by task
const place = (r) => (r.session ? `${r.session} #${r.session_position + 1}` : "");
function compareRuns(a, b) {
  return (a.session || "").localeCompare(b.session || "") || (a.session_position ?? 0) - (b.session_position ?? 0)
    || a.task_id.localeCompare(b.task_id) || armRank(a.arm) - armRank(b.arm) || a.arm.localeCompare(b.arm)
    || a.model.localeCompare(b.model) || a.program.localeCompare(b.program) || a.epoch - b.epoch;
}

// ---- routing ----
function parseHash() {
  const raw = decodeURIComponent(location.hash.replace(/^#/, "")) || "/";
  const [path, query] = raw.split("?");
  const params = new URLSearchParams(query || "");
  return { parts: path.split("/").filter(Boolean), params };
}

function route() {
  if (!state.index) return;
  const started = performance.now();
  const { parts, params } = parseHash();
  window.scrollTo(0, 0);
  if (parts[0] === "run" && parts[1] !== undefined) showRun(Number(parts[1]), params);
  else if (parts[0] === "task" && parts[1] !== undefined) showTask(parts.slice(1).join("/"), params);
  else showTable(params);
  document.body.dataset.renderMs = Math.round(performance.now() - started);  // read by benchmarks/viewer.py
}
window.addEventListener("hashchange", route);

function where(html) { document.getElementById("where").innerHTML = html; }

// ---- the run table ----
function tableHash(params) {
  const q = params.toString();
  return `#/${q ? `?${q}` : ""}`;
}

function showTable(params) {
  const rows = state.index.rows;
  const chosen = Object.fromEntries(FILTERS.map(([key]) => [key, params.get(key)]).filter(([, v]) => v !== null));
  const shown = rows.filter((r) => Object.entries(chosen).every(([k, v]) => value(r, k) === v));
  const sort = params.get("sort") || "";
  const key = sort.replace(/^-/, "");
  if (SORTS[key]) {
    const sign = sort.startsWith("-") ? -1 : 1;
    shown.sort((a, b) => sign * ((a[key] ?? -Infinity) - (b[key] ?? -Infinity)) || compareRuns(a, b));
  } else {
    shown.sort(compareRuns);
  }
  where(`${int(shown.length)} of ${int(rows.length)} runs`);
  const selects = FILTERS.map(([key, label]) => {
    const counts = new Map();
    rows.forEach((r) => counts.set(value(r, key), (counts.get(value(r, key)) || 0) + 1));
    const options = [...counts.keys()].sort().map((v) =>
      `<option value="${esc(v)}"${chosen[key] === v ? " selected" : ""}>${esc(v || "(none)")} (${counts.get(v)})</option>`);
    return `<label>${esc(label)}<select data-filter="${key}"><option value="">all</option>${options.join("")}</select></label>`;
  }).join("");
  const header = (label, sortKey, cls = "") => {
    if (!sortKey) return `<th class="${cls}">${label}</th>`;
    const arrow = key === sortKey ? (sort.startsWith("-") ? " ▼" : " ▲") : "";
    return `<th class="sortable ${cls}" data-sort="${sortKey}" title="sort by ${SORTS[sortKey]}">${label}${arrow}</th>`;
  };
  const many = (k) => new Set(rows.map((r) => r[k])).size > 1;  // model and program columns only when they vary
  const [showModel, showProgram] = [many("model"), many("program")];
  const body = shown.map((r) => `<tr data-run="${r.id}">
      <td><a href="#/task/${encodeURIComponent(r.task_id)}?suite=${encodeURIComponent(r.suite)}">${esc(r.task_id)}</a>
        <div class="muted">${esc(r.suite)} · ${esc(r.category)}${r.session ? ` · session ${esc(place(r))}` : ""}</div></td>
      <td>${esc(r.arm)}</td>${showModel ? `<td>${esc(r.model)}</td>` : ""}${showProgram ? `<td>${esc(r.program)}</td>` : ""}
      <td class="num">${r.epoch}</td>
      <td><a href="#/run/${r.id}" title="open this run">${result(r)}</a> ${errorTag(r.error_type)}</td>
      <td class="answer" title="${esc(r.answer)}">${esc(r.answer)}</td>
      <td class="num">${int(r.total_tokens)}</td><td class="num">${usd(r.cost_usd)}</td>
      <td class="num">${secs(r.latency_s)}</td><td class="num">${r.turns}</td><td class="num">${r.llm_calls}</td>
      <td class="num">${r.tool_calls}</td></tr>`).join("");
  app().innerHTML = `${inFlightHtml(state.inFlight)}
    <div class="filters">${selects}<button id="clear">clear filters</button></div>
    <div class="groups">${groupCards(shown)}</div>
    <table class="runs"><thead><tr>${header("task")}${header("arm")}${showModel ? header("model") : ""}
      ${showProgram ? header("program") : ""}
      ${header("epoch", "", "num")}${header("result")}${header("answer")}${header("tokens", "total_tokens", "num")}
      ${header("cost", "cost_usd", "num")}${header("latency", "latency_s", "num")}${header("turns", "turns", "num")}
      ${header("LM calls", "llm_calls", "num")}${header("tool calls", "tool_calls", "num")}</tr></thead>
      <tbody>${body}</tbody></table>
    <p class="muted">From ${state.index.sources.map(esc).join(", ")}</p>`;
  app().querySelectorAll("select[data-filter]").forEach((el) => el.addEventListener("change", () => {
    el.value ? params.set(el.dataset.filter, el.value) : params.delete(el.dataset.filter);
    location.hash = tableHash(params);
  }));
  app().querySelectorAll("th[data-sort]").forEach((el) => el.addEventListener("click", () => {
    params.set("sort", sort === `-${el.dataset.sort}` ? el.dataset.sort : `-${el.dataset.sort}`);
    location.hash = tableHash(params);
  }));
  document.getElementById("clear").addEventListener("click", () => { location.hash = "#/"; });
}

function groupCards(rows) {
  const groups = new Map();
  rows.forEach((r) => {
    const label = [r.arm, r.model, r.program].join(" · ");
    if (!groups.has(label)) groups.set(label, []);
    groups.get(label).push(r);
  });
  return [...groups.entries()].sort(([, a], [, b]) => compareRuns(a[0], b[0])).map(([label, part]) => {
    const passed = part.filter((r) => r.success).length;
    const costs = part.map((r) => r.cost_usd);
    const cost = costs.includes(null) ? null : costs.reduce((s, c) => s + c, 0);
    const mean = (k) => part.reduce((s, r) => s + (r[k] || 0), 0) / part.length;
    return `<div class="card"><b>${esc(label)}</b><div>${passed}/${part.length} passed ·
      ${int(Math.round(mean("total_tokens")))} tokens/run · ${secs(mean("latency_s"))}/run</div>
      <div class="muted">cost ${usd(cost)}${passed && cost != null ? ` · ${usd(cost / passed)} per success` : ""}</div></div>`;
  }).join("");
}

// ---- a run ----
function runTitle(r) { return `${esc(r.arm)} · ${esc(r.model)} · ${esc(r.program)} · epoch ${r.epoch}`; }

function metrics(r) {
  const cells = [
    ["tokens (prompt / completion)", `${int(r.total_tokens)} (${int(r.prompt_tokens)} / ${int(r.completion_tokens)})`],
    ["reused prompt tokens", int(r.reused_prompt_tokens)],
    ["cost", `${usd(r.cost_usd)}<div class="muted">${esc(r.cost_source)}</div>`],
    ["latency", `${secs(r.latency_s)}<div class="muted">LM ${secs(r.lm_time_s)} · tools ${secs(r.tool_time_s)} ·
      sandbox ${secs(r.sandbox_time_s)}</div>${r.tool_latency_s ? `<div class="muted">tool latency added:
      ${secs(r.tool_latency_s)} per call</div>` : ""}`],
    ["turns", `${r.turns} (${r.repeated_actions} repeated)`],
    ["LM calls", `${r.llm_calls} (${r.cached_llm_calls} from cache)`],
    ["tool calls", `${r.tool_calls} (${r.tool_errors} errors)`],
    ["policy violations", r.policy_violations],
    ...(r.user_model ? [["simulated user", `${esc(r.user_model)}: ${r.user_turns} messages<div class="muted">
      ${int(r.user_prompt_tokens)} / ${int(r.user_completion_tokens)} tokens, ${secs(r.user_time_s)} (not in the agent's)</div>`]] : []),
    ...(r.judge_model ? [["judge", `${esc(r.judge_model)}: ${r.judge_calls} calls<div class="muted">
      ${int(r.judge_prompt_tokens)} / ${int(r.judge_completion_tokens)} tokens, ${secs(r.judge_time_s)} (not in the agent's)</div>`]] : []),
  ];
  const names = (v) => (v === null || v === undefined ? "not recorded" : v || "none");
  if (r.session) cells.push(["session", `${esc(place(r))}<div class="muted">skills found ${esc(names(r.skills_available))}
    · saved ${esc(names(r.skills_saved))} · reused ${esc(names(r.skills_used))} · workspace files
    ${r.workspace_files ?? "not recorded"}</div>`]);
  return `<div class="metrics">${cells.map(([k, v]) => `<div><b>${k}</b>${v}</div>`).join("")}</div>`;
}

function showRun(id, params) {
  const r = state.index.rows[id];
  if (!r) { app().innerHTML = `<p class="errtext">No run ${esc(id)}.</p>`; return; }
  where(`<a href="#/task/${encodeURIComponent(r.task_id)}?suite=${encodeURIComponent(r.suite)}">${esc(r.task_id)}</a>
    › ${runTitle(r)}`);
  app().innerHTML = `
    <h1>${esc(r.task_id)} <span class="muted">· ${runTitle(r)}</span></h1>
    <div class="muted">run ${esc(r.run_id)} (${esc(r.file)}) · suite ${esc(r.suite)} · ${esc(r.category)} ·
      started ${esc(r.started_at)}</div>
    <div class="verdict"><span class="big">${result(r)}</span>${errorTag(r.error_type)}
      <span>answer <code>${esc(r.answer)}</code> · expected <code>${esc(expected(r))}</code></span></div>
    <div class="muted">${esc(r.score_reason)}</div>
    ${r.error_message ? `<div class="errtext">${esc(r.error_type)}: ${esc(r.error_message)}</div>` : ""}
    ${metrics(r)}
    <p><a href="#/task/${encodeURIComponent(r.task_id)}?suite=${encodeURIComponent(r.suite)}">this task's runs side
      by side</a> · <a href="#/?task_id=${encodeURIComponent(r.task_id)}">in the table</a></p>
    <div id="trajectory"><p class="muted">Loading the trajectory…</p></div>`;
  loadRun(id).then((t) => {
    if (parseHash().parts[1] !== String(id)) return;
    const holder = document.getElementById("trajectory");
    holder.innerHTML = trajectoryHtml(t);
    // An LM call's messages are built when first opened: a long run's prompts repeat its whole history.
    holder.querySelectorAll("details[data-call]").forEach((el) => {
      const fill = () => {
        if (el.dataset.filled) return;
        el.dataset.filled = "1";
        const call = t.lm_calls[Number(el.dataset.call)];
        const known = Number(el.dataset.known);
        el.insertAdjacentHTML("beforeend", (call.messages || []).map((m, i) => messageHtml(m, i >= known)).join(""));
      };
      el.addEventListener("toggle", fill);
      if (params.get("messages") === "open") { fill(); el.open = true; }
    });
  }).catch((e) => {
    document.getElementById("trajectory").innerHTML = `<p class="errtext">${esc(e.message)}</p>`;
  });
}

function messageHtml(m, isNew) {
  const calls = (m.tool_calls || []).map((c) => `${c.function.name}(${c.function.arguments})`).join("\n");
  const text = [m.content, calls].filter(Boolean).join("\n");
  return `<div class="msg ${isNew ? "new" : "old"}"><span class="role">${esc(m.role)}${m.name ? ` · ${esc(m.name)}` : ""}
    ${isNew ? "· new" : ""}</span><pre>${esc(text)}</pre></div>`;
}

function sharedPrefix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && JSON.stringify(a[n]) === JSON.stringify(b[n])) n += 1;
  return n;
}

function lmCallHtml(call, index, previous, position = index) {  // position: the call's index in the run's lm_calls
  const messages = call.messages || [];
  const known = previous ? sharedPrefix(previous.messages || [], messages) : 0;
  const output = [call.output, ...(call.tool_calls || []).map((c) => `${c.name}(${JSON.stringify(c.arguments)})`)]
    .filter(Boolean).join("\n");
  const who = call.role && call.role !== "agent" ? `${call.role} model call` : `LM call ${index + 1}`;
  return `<div class="item lm" data-kind="lm-call"><div class="head"><span class="kind">${esc(who)}</span>
      <span class="stats">prompt ${int(call.prompt_tokens)} · completion ${int(call.completion_tokens)} ·
      reused ${int(call.reused_prompt_tokens)} · ${secs(call.latency_s)}</span>
      ${call.cached ? `<span class="tag hit">cache hit</span>` : `<span class="tag">cache miss</span>`}
      ${call.grammar ? `<span class="tag">grammar</span>` : ""}</div>
    <details data-call="${position}" data-known="${known}"><summary>${messages.length} messages,
      ${messages.length - known} new since the previous call</summary></details>
    <div><b>output</b><pre>${esc(output || "(empty)")}</pre></div></div>`;
}

function stepHtml(step) {
  const rules = (step.rules || []).map((rule) => `<span class="tag">rule: ${esc(rule)}</span>`).join("");
  const repeat = (step.repeat_of != null ? `<span class="tag err">repeats turn ${step.repeat_of + 1}</span>` : "") + rules;
  const observation = step.observation ? `<div><b>observation</b><pre>${esc(step.observation)}</pre></div>` : "";
  if (step.kind === "code") {
    const error = step.error ? `<div class="errtext"><b>error</b> (${esc(step.error_kind)})<pre>${esc(step.error)}</pre></div>` : "";
    const stdout = step.stdout && step.stdout.trim() !== (step.observation || "").trim()
      ? `<div><b>printed</b><pre>${esc(step.stdout)}</pre></div>` : "";
    return `<div class="item code" data-kind="code"><div class="head"><span class="kind">code</span>
        <span class="stats">${secs(step.duration_s)} · ${step.tool_calls ?? 0} tool calls</span>${repeat}
        ${step.final_answer !== undefined ? `<span class="tag hit">final_answer(${esc(json(step.final_answer))})</span>` : ""}</div>
      <pre>${esc(step.code)}</pre>${stdout}${observation}${error}</div>`;
  }
  if (step.kind === "tool") {
    const uses = step.calls || [];
    const names = uses.map((c) => c.tool).join(", ");
    const several = uses.length > 1 ? `<span class="tag">${uses.length} calls together</span>` : "";
    // one call: its observation is the step's; several: each call with its own observation
    const body = uses.length > 1
      ? uses.map((c) => `<div data-kind="action-call"><pre>${esc(`${c.tool}(${JSON.stringify(c.arguments)})`)}</pre>
          ${c.observation ? `<div><b>observation</b><pre>${esc(c.observation)}</pre></div>` : ""}</div>`).join("")
      : `${uses.map((c) => `<pre>${esc(`${c.tool}(${JSON.stringify(c.arguments)})`)}</pre>`).join("")}${observation}`;
    return `<div class="item tool" data-kind="action"><div class="head"><span class="kind">action: ${esc(names)}</span>${several}${repeat}</div>
      ${step.thought ? `<div class="muted">${esc(step.thought)}</div>` : ""}${body}</div>`;
  }
  if (step.kind === "answer" && step.to_user) {  // a conversation: the agent's message and the user's reply
    return `<div class="item answer" data-kind="message"><div class="head"><span class="kind">message to the user</span>${rules}</div>
      <pre>${esc(step.text)}</pre><div><b>user${step.user_ended ? " (ended the conversation)" : ""}</b>
      <pre>${esc(step.observation)}</pre></div></div>`;
  }
  if (step.kind === "answer") {
    return `<div class="item answer" data-kind="answer"><div class="head"><span class="kind">answer</span>${rules}</div>
      <pre>${esc(step.text ?? json(step))}</pre>${observation}</div>`;
  }
  return `<div class="item unparsed" data-kind="${esc(step.kind)}"><div class="head"><span class="kind">${esc(step.kind)}</span>${repeat}</div>
    <pre>${esc(step.error || json(step))}</pre>${observation}</div>`;
}

function toolCallHtml(call) {
  return `<div class="item tool" data-kind="tool-call"><div class="head"><span class="kind">tool call: ${esc(call.tool)}</span>
      <span class="stats">${secs(call.duration_s)} · ${int(call.result_chars)} chars</span>
      ${call.is_error ? `<span class="tag err">error</span>` : ""}</div>
    <div><b>arguments</b><pre>${esc(JSON.stringify(call.arguments, null, 1))}</pre></div>
    <div><b>result</b><pre class="${call.is_error ? "errtext" : ""}">${esc(call.result_preview)}</pre></div></div>`;
}

// The MCP calls a step made: each call names its step (the trajectory file attributes them, older files too).
function callsOf(calls, index) {
  return calls.filter((c) => c.step === index);
}

function probeHtml(probe) {
  return `<div class="item tool" data-kind="probe"><div class="head"><span class="kind">probe: ${esc(probe.server)}.${esc(probe.tool)}</span>
      <span class="stats">${secs(probe.duration_s)} · ${int(probe.result_chars)} chars · not the agent's call</span>
      ${probe.is_error ? `<span class="tag err">error</span>` : ""}</div>
    <div><b>arguments</b><pre>${esc(JSON.stringify(probe.arguments, null, 1))}</pre></div>
    <div><b>result</b><pre class="${probe.is_error ? "errtext" : ""}">${esc(probe.result_preview)}</pre></div></div>`;
}

function trajectoryHtml(t) {
  if (t.missing) return `<p class="muted">This run's trajectory line is missing (no .trajectories.jsonl next to the results file).</p>`;
  // a conversation's simulated user makes LM calls too: each is shown after the agent's turn it answered
  const calls = (t.lm_calls || []).filter((c) => (c.role || "agent") === "agent");
  const userCalls = (t.lm_calls || []).filter((c) => c.role === "user");
  const steps = t.steps || [];
  const toolCalls = t.tool_calls || [];
  const parts = [`<h2>Task</h2><pre>${esc(t.prompt)}</pre><h2>Trajectory</h2><div class="timeline">`];
  const at = (c) => (t.lm_calls || []).indexOf(c);
  userCalls.filter((c) => c.step == null).forEach((c, n) => parts.push(lmCallHtml(c, n, null, at(c))));
  for (let i = 0; i < Math.max(calls.length, steps.length); i += 1) {
    parts.push(`<div class="turn-label">turn ${i + 1}</div>`);
    if (calls[i]) parts.push(lmCallHtml(calls[i], i, calls[i - 1], at(calls[i])));
    if (steps[i]) parts.push(stepHtml(steps[i]));
    callsOf(toolCalls, i).forEach((c) => parts.push(toolCallHtml(c)));
    userCalls.filter((c) => c.step === i).forEach((c) => parts.push(lmCallHtml(c, i, null, at(c))));
  }
  toolCalls.filter((c) => c.step == null || c.step >= Math.max(calls.length, steps.length))
    .forEach((c) => parts.push(toolCallHtml(c)));
  if (t.error) {
    parts.push(`<div class="item error" data-kind="error"><div class="head"><span class="kind">run ended: ${esc(t.error.type)}</span></div>
      <pre>${esc(t.error.message)}</pre></div>`);
  }
  parts.push("</div>");
  if ((t.probes || []).length) {
    parts.push(`<h2>Probes</h2><p class="muted">Read-only calls the scorer made on the run's servers after the agent ended.</p>
      <div class="timeline">${t.probes.map(probeHtml).join("")}</div>`);
  }
  const logs = Object.entries(t.server_logs || {});
  if (logs.length) parts.push(`<h2>Server logs</h2><ul>${logs.map(([s, p]) => `<li>${esc(s)}: <code>${esc(p)}</code></li>`).join("")}</ul>`);
  return parts.join("");
}

// ---- a task: its runs side by side ----
function compactStep(step, toolCalls) {
  const obs = step.observation ? `<pre>${esc(clip(step.observation, 600))}</pre>` : "";
  if (step.kind === "code") {
    const error = step.error ? `<div class="errtext">${esc(clip(step.error, 300))}</div>` : "";
    return `<div class="step"><b>code</b> <span class="muted">${toolCalls.length} tool calls</span>
      <pre>${esc(step.code)}</pre>${obs}${error}</div>`;
  }
  if (step.kind === "tool") {
    const failed = toolCalls.some((c) => c.is_error) ? `<span class="tag err">tool error</span>` : "";
    const uses = (step.calls || []).map((c) => `<b>${esc(c.tool)}</b><pre>${esc(JSON.stringify(c.arguments))}</pre>`);
    return `<div class="step">${uses.join("")} ${failed}${obs}</div>`;
  }
  return `<div class="step"><b>${esc(step.kind)}</b><pre>${esc(clip(step.text ?? step.error ?? json(step), 600))}</pre>${obs}</div>`;
}

function showTask(taskId, params) {
  const suite = params.get("suite");
  const runs = state.index.rows.filter((r) => r.task_id === taskId && (!suite || r.suite === suite)).sort(compareRuns);
  where(`task ${esc(taskId)}${suite ? ` · ${esc(suite)}` : ""}`);
  if (!runs.length) { app().innerHTML = `<p class="errtext">No runs of task ${esc(taskId)}.</p>`; return; }
  const first = runs[0];
  app().innerHTML = `<h1>${esc(taskId)} <span class="muted">· ${esc(first.suite)} · ${esc(first.category)}</span></h1>
    <p>expected <code>${esc(expected(first))}</code> · ${runs.filter((r) => r.success).length} of ${runs.length} runs passed ·
      <a href="#/?task_id=${encodeURIComponent(taskId)}">in the table</a></p>
    <pre id="task-prompt" class="muted">…</pre>
    <div class="side">${runs.map((r) => `<div class="col" data-run="${r.id}">
      <h3><a href="#/run/${r.id}">${runTitle(r)}</a></h3>
      <div>${result(r)} ${errorTag(r.error_type)} answer <code>${esc(clip(r.answer, 80))}</code></div>
      ${r.success || r.error_type ? "" : `<div class="muted">${esc(r.score_reason)}</div>`}
      <div class="muted">${int(r.total_tokens)} tokens · ${usd(r.cost_usd)} · ${secs(r.latency_s)} · ${r.turns} turns ·
        ${r.tool_calls} tool calls</div>
      <div class="steps"><p class="muted">Loading…</p></div></div>`).join("")}</div>`;
  runs.forEach((r) => loadRun(r.id).then((t) => {
    const column = app().querySelector(`.col[data-run="${r.id}"] .steps`);
    if (!column) return;
    const prompt = document.getElementById("task-prompt");
    if (prompt && t.prompt) { prompt.textContent = t.prompt; prompt.classList.remove("muted"); }
    column.innerHTML = (t.steps || []).map((s, i) => compactStep(s, callsOf(t.tool_calls || [], i))).join("")
      + (t.error ? `<div class="step errtext"><b>${esc(t.error.type)}</b>: ${esc(t.error.message)}</div>` : "");
  }).catch((e) => {
    const column = app().querySelector(`.col[data-run="${r.id}"] .steps`);
    if (column) column.innerHTML = `<p class="errtext">${esc(e.message)}</p>`;
  }));
}
