// sregym view: a small single-page app over the viewer's JSON endpoints.
// Routes live in the URL hash (#/run/KEY, #/run/KEY/problem/ID, #/run/KEY/attempt/ID/SEED) so a
// page can be bookmarked and reloaded. Every text from a run goes through textContent, never
// innerHTML: observations are arbitrary program output. The one exception is the timeline SVG,
// which the server builds and escapes itself.
"use strict";

const POLL_MS = 2000;
let pollTimer = null;
let renderToken = 0;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const enc = encodeURIComponent;
const pct = (v) => (v === null || v === undefined ? "–" : `${(100 * v).toFixed(0)}%`);
const num = (v, digits = 1) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits).replace(/\.0+$/, ""));
const usd = (v) => (v === null || v === undefined ? "–" : `$${Number(v) < 1 ? Number(v).toFixed(4) : Number(v).toFixed(2)}`);
function costSum(values) {
  const xs = values.filter((v) => typeof v === "number");
  return xs.length ? xs.reduce((a, b) => a + b, 0) : null; // blank, not 0, when no cost is known
}
const secs = (v) => (v === null || v === undefined ? "–" : `${num(v)} s`);
const mark = { pass: "pass", fail: "fail", environment_failure: "env-fail" };

function rateCell(block) {
  if (!block || !block.n) return h("td", { class: "num" }, "–");
  const iv = block.interval;
  return h("td", { class: "num" }, `${pct(block.passed / block.n)} `,
    h("span", { class: "muted iv" }, `${block.passed}/${block.n} · 95% ${pct(iv.low)}–${pct(iv.high)}`));
}

function yesNo(v) {
  if (v === null || v === undefined) return h("span", { class: "muted" }, "–");
  return h("span", { class: v ? "pass" : "fail" }, v ? "pass" : "fail");
}

async function getJSON(url) {
  const res = await fetch(url, { cache: "no-store" });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || `${res.status} ${res.statusText}`);
  return body;
}

function setCrumbs(items) {
  const nav = document.getElementById("crumbs");
  nav.replaceChildren(...items.flatMap((it, i) => [i ? " / " : "", it.href ? h("a", { href: it.href }, it.text) : it.text]));
}

function setLive(running) {
  document.getElementById("live").hidden = !running;
}

// ------------------------------------------------------------------ runs list
function renderRuns(data) {
  setCrumbs([]);
  if (!data.runs.length) return [h("h1", {}, "Runs"), h("p", { class: "muted" }, "No run directories found.")];
  const state = (r) => (r.kind === "snapshot" ? (r.scored ? "scored" : "not scored") : r.running ? "running" : "finished");
  const rows = data.runs.map((r) => h("tr", { "data-run": r.key, "data-kind": r.kind },
    h("td", {}, h("a", { href: `#/run/${enc(r.key)}` }, r.name)),
    h("td", {}, r.kind === "snapshot" ? "snapshot" : "run"),
    h("td", {}, r.agent), h("td", {}, r.model || "–"), h("td", {}, r.started_at || "–"),
    h("td", { class: "num" }, `${r.attempts}/${r.planned}`), h("td", { class: "num" }, pct(r.end_to_end)),
    h("td", { class: "num" }, r.score === null || r.score === undefined ? "–" : num(r.score, 3)),
    h("td", { class: r.running ? "pass" : "muted" }, state(r))));
  return [h("h1", {}, "Runs"),
    h("table", { id: "runs" }, h("tr", {}, ["run", "kind", "agent", "model", "started", "attempts", "end to end", "score", "state"].map((c) => h("th", {}, c))), rows)];
}

// ------------------------------------------------------------------ run page
function ratesTable(id, title, groups) {
  const keys = Object.keys(groups);
  if (!keys.length) return null;
  return h("div", { class: "panel" }, h("h3", {}, title),
    h("table", { id }, h("tr", {}, ["", "attempts", "diagnosis", "mitigation", "end to end"].map((c) => h("th", {}, c))),
      keys.map((k) => h("tr", {}, h("td", {}, k), h("td", { class: "num" }, groups[k].attempts),
        rateCell(groups[k].diagnosis), rateCell(groups[k].mitigation), rateCell(groups[k].end_to_end)))));
}

function mean(values) {
  const xs = values.filter((v) => typeof v === "number");
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

// A scored snapshot run: the benchmark score (mean over tasks of the mean root-cause score over
// repeats), the exact-root-cause rate, pass^k, layers, and one row per task with a cell per repeat.
function renderSnapshot(key, d) {
  setCrumbs([{ text: d.run.name }]);
  setLive(false);
  const o = d.overall;
  const summary = h("div", { class: "panel", id: "summary" }, h("h3", {}, "Overall"),
    h("table", {},
      h("tr", {}, h("th", {}, "benchmark score"), h("td", { class: "num", id: "snapshot-score" }, num(d.score, 3))),
      h("tr", {}, h("th", {}, "checklist"), h("td", { class: "num" }, d.checklist === null ? "–" : num(d.checklist, 3))),
      h("tr", {}, h("th", {}, "exact root cause"), rateCell(o.diagnosis && { passed: o.diagnosis.passes, n: o.diagnosis.n, interval: o.diagnosis })),
      h("tr", {}, h("th", {}, "tasks × repeats"), h("td", { class: "num" }, `${d.tasks.length} × ${d.repeats}`)),
      h("tr", {}, h("th", {}, "judge"), h("td", {}, d.judge || "–"))),
    h("h3", {}, "pass^k"),
    h("table", { id: "pass-k" }, h("tr", {}, Object.keys(d.pass_hat_k).map((k) => h("th", {}, `k=${k}`))),
      h("tr", {}, Object.values(d.pass_hat_k).map((v) => h("td", { class: "num" }, pct(v))))));
  const layers = Object.entries(d.layers);
  const layerPanel = layers.length ? h("div", { class: "panel" }, h("h3", {}, "By layer"),
    h("table", { id: "by-layer" }, h("tr", {}, ["layer", "tasks", "score"].map((c) => h("th", {}, c))),
      layers.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", { class: "num" }, v.tasks), h("td", { class: "num" }, num(v.score, 3)))))) : null;
  const repeatCell = (r) => h("span", { class: `repeat ${r.score >= 1 ? "pass" : "fail"}`, title: r.reason || (r.entities || []).join(", ") || "no entities" },
    `${r.repeat}:${num(r.score, 2)}`);
  const rows = d.tasks.map((t) => h("tr", { "data-task": t.task },
    h("td", {}, t.task), h("td", {}, t.problem || "–"), h("td", {}, t.layers.join(", ")),
    h("td", { class: "repeats" }, t.repeats.flatMap((r) => [repeatCell(r), " "])),
    h("td", { class: "num" }, num(t.score, 3)), h("td", { class: "num" }, t.checklist === null ? "–" : num(t.checklist, 3)),
    h("td", { class: "muted" }, [...new Set(t.repeats.map((r) => r.reason).filter((x) => x))].join("; ") || "")));
  return [
    h("h1", {}, `${d.run.name}: ${d.run.agent}${d.run.model ? ` (${d.run.model})` : ""} · snapshot`),
    h("p", { class: "muted" }, `dataset ${d.dataset || "–"} · noise ${d.run.noise || "–"}`),
    h("div", { class: "stack" }, summary, layerPanel),
    d.notes.length ? [h("h2", {}, "Notes"), h("ul", {}, d.notes.map((n) => h("li", {}, n)))] : null,
    h("h2", {}, "Tasks"),
    h("table", { id: "tasks" }, h("tr", {}, ["task", "problem", "layers", "repeats", "score", "checklist", "why 0"].map((c) => h("th", {}, c))), rows),
  ];
}

function renderRun(key, d) {
  if (d.kind === "snapshot") return renderSnapshot(key, d);
  setCrumbs([{ text: d.run.name }]);
  setLive(d.run.running);
  const o = d.overall;
  const boot = o.end_to_end_by_problem;
  const summary = h("div", { class: "panel", id: "summary" }, h("h3", {}, "Overall"),
    h("table", {},
      h("tr", {}, h("th", {}, "diagnosis"), rateCell(o.diagnosis)),
      h("tr", {}, h("th", {}, "mitigation"), rateCell(o.mitigation)),
      h("tr", {}, h("th", {}, "end to end"), rateCell(o.end_to_end)),
      h("tr", {}, h("th", {}, "end to end, mean over problems"), h("td", { class: "num" },
        boot ? [`${pct(boot.estimate)} `, h("span", { class: "muted iv" }, `95% bootstrap over problems ${pct(boot.low)}–${pct(boot.high)}`)] : "–")),
      h("tr", {}, h("th", {}, "attempts"), h("td", { class: "num" },
        `${o.attempts} (${o.environment_failures} environment failures${d.missing ? `, ${d.missing} missing` : ""}${d.skipped.length ? `, ${d.skipped.length} skipped` : ""})`))),
    h("h3", {}, "pass^k"),
    h("table", { id: "pass-k" }, h("tr", {}, Object.keys(d.pass_hat_k).map((k) => h("th", {}, `k=${k}`))),
      h("tr", {}, Object.values(d.pass_hat_k).map((v) => h("td", { class: "num" }, pct(v))))),
    h("h3", {}, "Means per attempt"),
    h("p", {}, `steps ${num(d.means.steps)} · tool calls ${num(d.means.tool_calls)} · tokens in ${num(d.means.tokens_in, 0)} · tokens out ${num(d.means.tokens_out, 0)} · cost ${usd(d.means.cost_usd)} per attempt, ${usd(d.cost_usd)} in all`));
  const problemRows = d.problems.map((p) => h("tr", { "data-problem": p.problem_id },
    h("td", {}, h("a", { href: `#/run/${enc(key)}/problem/${enc(p.problem_id)}`, class: "problem-link" }, p.problem_id)),
    h("td", {}, p.difficulty || "–"), h("td", {}, p.layers.join(", ")),
    h("td", {}, p.seeds.map((c) => h("a", { href: `#/run/${enc(key)}/attempt/${enc(p.problem_id)}/${c.seed}`,
      class: `seed-link ${c.verdict}`, title: `seed ${c.seed}: ${c.verdict}` }, `${c.seed}:${mark[c.verdict]}`))),
    h("td", { class: "num" }, `${p.passed}/${p.attempts - p.environment_failures}`),
    h("td", { class: "num" }, secs(p.mean_sim_seconds_to_diagnosis)), h("td", { class: "num" }, secs(p.mean_sim_seconds_to_mitigation)),
    h("td", { class: "num" }, num(p.mean_steps)),
    h("td", { class: "num" }, num(mean(p.seeds.map((c) => c.tokens_in)), 0)),
    h("td", { class: "num" }, num(mean(p.seeds.map((c) => c.tokens_out)), 0)),
    h("td", { class: "num cost" }, usd(costSum(p.seeds.map((c) => c.cost_usd))))));
  const reasons = Object.entries(d.environment_failure_reasons);
  return [
    h("h1", {}, `${d.run.name}: ${d.run.agent}${d.run.model ? ` (${d.run.model})` : ""}`),
    h("p", { class: "muted" }, `noise ${d.run.noise} · started ${d.run.started_at || "–"} · ${d.run.running ? "running" : `finished ${d.run.finished_at || ""}`}${d.summary_is_final ? "" : " · summary recomputed from results.jsonl"}`),
    h("div", { class: "stack" }, summary, ratesTable("by-layer", "By layer", d.by_layer),
      ratesTable("by-app", "By app", d.by_app), ratesTable("by-difficulty", "By difficulty", d.by_difficulty)),
    reasons.length ? [h("h2", {}, "Environment failures"), h("ul", {}, reasons.map(([r, n]) => h("li", {}, `${n} × ${r}`)))] : null,
    d.skipped.length ? [h("h2", {}, "Skipped (not run on this backend, not scored)"), h("ul", { id: "skipped" },
      d.skipped.map((x) => h("li", {}, `${x.problem_id} seed ${x.seed}: ${x.reason || "not run on this backend"}`)))] : null,
    h("h2", {}, "Problems"),
    h("table", { id: "problems" }, h("tr", {}, ["problem", "difficulty", "layers", "seeds", "e2e", "to diagnosis", "to mitigation", "steps", "tokens in", "tokens out", "cost"].map((c) => h("th", {}, c))), problemRows),
  ];
}

// ------------------------------------------------------------------ problem page
function entity(e) {
  return `${e.kind} ${e.namespace ? `${e.namespace}/` : ""}${e.name}`;
}

function groundTruthPanel(gt) {
  if (!gt) return h("div", { class: "panel", id: "ground-truth" }, h("h3", {}, "Ground truth"),
    h("p", { class: "muted" }, "Unknown here: the problem is not in the registry, nor in a --problems-dir of the run that still loads."));
  return h("div", { class: "panel", id: "ground-truth" }, h("h3", {}, "Ground truth"),
    h("table", {},
      h("tr", {}, h("th", {}, "root cause"), h("td", {}, gt.root_causes.map((rc) => h("div", {}, entity(rc.entity))))),
      h("tr", {}, h("th", {}, "mechanism"), h("td", {}, gt.mechanism)),
      h("tr", {}, h("th", {}, "detail"), h("td", {}, gt.detail)),
      h("tr", {}, h("th", {}, "affected"), h("td", {}, gt.affected.length ? gt.affected.map((a) => h("div", {}, entity(a.entity))) : "–")),
      h("tr", {}, h("th", {}, "description"), h("td", {}, gt.description || "–"))));
}

function attemptsTable(key, problemId, cells) {
  return h("table", { id: "attempts" },
    h("tr", {}, ["seed", "verdict", "diagnosis", "mitigation", "to diagnosis", "to mitigation", "steps", "tool calls", "tokens in", "tokens out", "cost"].map((c) => h("th", {}, c))),
    cells.map((c) => h("tr", {},
      h("td", {}, h("a", { href: `#/run/${enc(key)}/attempt/${enc(problemId)}/${c.seed}`, class: "attempt-link" }, `seed ${c.seed}`)),
      h("td", { class: c.verdict }, c.verdict), h("td", {}, yesNo(c.diagnosis)), h("td", {}, yesNo(c.mitigation)),
      h("td", { class: "num" }, secs(c.sim_seconds_to_diagnosis)), h("td", { class: "num" }, secs(c.sim_seconds_to_mitigation)),
      h("td", { class: "num" }, num(c.steps)), h("td", { class: "num" }, num(c.tool_calls)),
      h("td", { class: "num" }, num(c.tokens_in, 0)), h("td", { class: "num" }, num(c.tokens_out, 0)),
      h("td", { class: "num cost" }, usd(c.cost_usd)))));
}

function renderProblem(key, problemId, d) {
  setCrumbs([{ text: d.run.name, href: `#/run/${enc(key)}` }, { text: problemId }]);
  setLive(d.run.running);
  return [h("h1", {}, problemId),
    h("p", { class: "muted" }, `difficulty ${d.problem.difficulty || "–"} · layers ${d.problem.layers.join(", ") || "–"} · resolved ${d.problem.resolved ? "yes" : "no"}`),
    h("h2", {}, "Attempts"), attemptsTable(key, problemId, d.attempts), groundTruthPanel(d.ground_truth)];
}

// ------------------------------------------------------------------ attempt page
function submittedPanel(sub) {
  const panel = h("div", { class: "panel", id: "submitted" }, h("h3", {}, "Submitted diagnosis"));
  if (!sub) {
    panel.append(h("p", { class: "muted" }, "No diagnosis was submitted."));
    return panel;
  }
  const list = (xs) => (Array.isArray(xs) && xs.length ? xs.map((x) => h("div", {}, typeof x === "string" ? x : JSON.stringify(x))) : "–");
  const rows = [
    h("tr", {}, h("th", {}, "root cause"), h("td", {}, list(sub.root_cause_entities))),
    h("tr", {}, h("th", {}, "mechanism"), h("td", {}, sub.mechanism || "–")),
    h("tr", {}, h("th", {}, "affected"), h("td", {}, list(sub.affected_entities))),
    h("tr", {}, h("th", {}, "explanation"), h("td", {}, sub.explanation || "–")),
  ];
  for (const [k, v] of Object.entries(sub)) {
    if (["root_cause_entities", "mechanism", "affected_entities", "explanation"].includes(k)) continue;
    rows.push(h("tr", {}, h("th", {}, k.replace(/_/g, " ")), h("td", {}, typeof v === "string" ? v : JSON.stringify(v))));
  }
  panel.append(h("table", {}, rows));
  return panel;
}

function checklist(diag) {
  if (!diag) return h("p", { class: "muted" }, "No diagnosis phase.");
  const dims = Object.entries(diag.dimension_scores || {}).map(([k, v]) => `${k} ${num(v, 2)}`).join(" · ");
  return [
    h("p", {}, "Root-cause score ", h("b", {}, num(diag.root_cause_score, 2)), " · checklist score ", h("b", {}, num(diag.checklist_score, 2)),
      ` · ${dims} · judge ${diag.judge || "–"}${diag.judge_model ? ` (${diag.judge_model})` : ""} · `, yesNo(diag.passed)),
    h("table", { id: "checklist" },
      h("tr", {}, ["dimension", "question", "answer", "evidence", "confidence"].map((c) => h("th", {}, c))),
      (diag.checklist || []).map((q) => h("tr", { "data-question": q.id },
        h("td", {}, q.dimension), h("td", {}, q.question), h("td", {}, yesNo(q.answer)),
        h("td", {}, q.evidence || "–"), h("td", { class: "num" }, num(q.confidence, 2)))))];
}

function mitigation(mit) {
  if (!mit) return h("p", { class: "muted" }, "No mitigation phase.");
  return [
    h("p", {}, `declared done: ${mit.declared_done ? "yes" : "no"} · verification window ${secs(mit.window_s)} · `, yesNo(mit.passed)),
    h("table", { id: "checks" }, h("tr", {}, ["check", "role", "verdict", "detail"].map((c) => h("th", {}, c))),
      (mit.checks || []).map((c) => h("tr", {}, h("td", {}, c.name), h("td", {}, c.role), h("td", {}, yesNo(c.passed)), h("td", {}, c.detail || ""))))];
}

function trajectory(steps) {
  if (!steps.length) return h("p", { class: "muted", id: "trajectory" }, "No trajectory on disk.");
  return h("div", { id: "trajectory" }, steps.map((s) => {
    const kind = s.is_error ? "error" : s.kind;
    const args = s.kind === "message" ? s.args && s.args.tool_calls && s.args.tool_calls.length ? s.args.tool_calls : null : s.args;
    return h("div", { class: `step ${kind}`, "data-index": s.index },
      h("div", { class: "step-head" }, h("span", { class: "muted" }, `#${s.index}`), h("span", { class: "tool" }, s.tool),
        h("span", { class: "muted" }, `${s.phase} · t=${num(s.sim_time)} s${s.is_error ? " · error" : ""}`)),
      args && Object.keys(args).length ? h("pre", { class: "args" }, JSON.stringify(args, null, 2)) : null,
      s.observation ? h("pre", { class: "observation" }, s.observation) : null);
  }));
}

function renderAttempt(key, problemId, seed, d) {
  setCrumbs([{ text: d.run.name, href: `#/run/${enc(key)}` }, { text: problemId, href: `#/run/${enc(key)}/problem/${enc(problemId)}` }, { text: `seed ${seed}` }]);
  setLive(d.run.running);
  const r = d.result;
  const svg = h("div", { class: "panel", id: "timeline" });
  svg.innerHTML = d.timeline_svg; // built and escaped by the server (sregym/viewer/timeline.py)
  let slo = null;
  if (d.slo_svg) {
    slo = h("div", { class: "panel", id: "entry-slo" });
    slo.innerHTML = d.slo_svg; // built by the server too (sregym/viewer/slo_plot.py), numbers and fixed words only
  }
  return [
    h("h1", {}, `${problemId} · seed ${seed} · `, h("span", { class: d.cell.verdict }, d.cell.verdict)),
    h("p", { class: "muted" }, `agent ${r.agent}${r.model ? ` (${r.model})` : ""} · steps ${num(r.steps)} · tool calls ${num(r.tool_calls)} · tokens ${num(r.tokens_in, 0)}/${num(r.tokens_out, 0)} · cost ${usd(r.cost_usd)} · wall ${secs(r.wall_seconds)}${r.truncated ? ` · truncated: ${r.truncation_reason}` : ""}`),
    r.environment_failure_reason ? h("pre", {}, r.environment_failure_reason) : null,
    r.agent_error ? [h("h2", {}, "Agent error"), h("pre", {}, r.agent_error)] : null,
    h("h2", {}, "Timeline"), svg,
    slo ? [h("h2", {}, "Entry SLO"), slo] : null,
    h("h2", {}, "Diagnosis"), h("div", { class: "grid" }, submittedPanel(d.submitted_diagnosis), groundTruthPanel(d.ground_truth)),
    h("h2", {}, "Checklist"), checklist(r.diagnosis),
    h("h2", {}, "Mitigation checks"), mitigation(r.mitigation),
    h("h2", {}, `Trajectory (${d.trajectory.length} steps)`), trajectory(d.trajectory)];
}

// ------------------------------------------------------------------ routing and polling
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "run" && parts[1]) {
    const key = parts[1];
    const base = `/api/runs/${enc(key)}`;
    if (parts[2] === "problem" && parts[3]) return { url: `${base}/problem?id=${enc(parts[3])}`, draw: (d) => renderProblem(key, parts[3], d) };
    if (parts[2] === "attempt" && parts[3] && parts[4] !== undefined) {
      return { url: `${base}/attempt?problem=${enc(parts[3])}&seed=${enc(parts[4])}`, draw: (d) => renderAttempt(key, parts[3], parts[4], d) };
    }
    return { url: base, draw: (d) => renderRun(key, d) };
  }
  return { url: "/api/runs", draw: renderRuns, always: true };
}

async function show(isPoll) {
  const token = ++renderToken;
  clearTimeout(pollTimer);
  const r = route();
  const main = document.getElementById("main");
  let data;
  try {
    data = await getJSON(r.url);
  } catch (err) {
    if (token !== renderToken) return;
    main.replaceChildren(h("p", { class: "fail", id: "error" }, String(err.message || err)));
    return;
  }
  if (token !== renderToken) return;
  const scroll = window.scrollY;
  main.replaceChildren(...[r.draw(data)].flat(3).filter((x) => x));
  if (isPoll) window.scrollTo(0, scroll);
  const running = r.always ? (data.runs || []).some((x) => x.running) : data.run && data.run.running;
  if (!r.always) setLive(running);
  if (running || r.always) pollTimer = setTimeout(() => show(true), POLL_MS);
  document.body.dataset.loaded = r.url;
}

window.addEventListener("hashchange", () => show(false));
show(false);
