// app.js: the console's pages, routed by the URL's fragment (#/runs,
// #/runs/ID, #/approvals, #/tools, #/sessions, #/sessions/USER/NAME).
// Every page reads the JSON API (openapi.json) with the token entered in
// the header; nothing is fetched from anywhere else.

import { api, authHeaders, enc, errorOf, setToken, token, APIError } from "./api.js";
import { streamEvents } from "./sse.js";
import { Timeline } from "./timeline.js";
import { clear, facts, field, h, keyed, pretty, put, statusBadge, when } from "./dom.js";

const main = document.getElementById("main");
const ended = new Set(["completed", "failed", "cancelled", "interrupted"]);

// page is the current page's life: its timers and streams stop when the
// person goes elsewhere.
let page = new AbortController();

function every(ms, fn) {
  const signal = page.signal;
  const tick = async () => {
    if (signal.aborted) return;
    await fn();
    if (!signal.aborted) setTimeout(tick, ms);
  };
  tick();
}

function notice(text, isError) {
  const box = document.getElementById("notice");
  const p = h("p", { class: isError ? "error" : "", text });
  box.append(p);
  setTimeout(() => p.remove(), isError ? 8000 : 4000);
}

function errorBox(err) {
  return h("p", { class: "error", role: "alert", text: err instanceof APIError ? err.message : String(err) });
}

function title(text) {
  const t = h("h1", { tabindex: "-1", text });
  return t;
}

// ---- token ----

function showTokenState() {
  document.getElementById("token-state").textContent = token() ? "token set for this tab" : "no token";
}

document.getElementById("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("token");
  setToken(input.value.trim());
  input.value = "";
  showTokenState();
  route();
});
document.getElementById("token-forget").addEventListener("click", () => {
  setToken("");
  showTokenState();
  route();
});

// ---- the approvals badge ----

async function refreshBadge() {
  const badge = document.getElementById("approvals-count");
  try {
    const { runs } = await api("GET", "v1/runs?status=awaiting_approval");
    const n = runs.reduce((a, r) => a + (r.pending || []).length, 0);
    badge.textContent = String(n);
    badge.hidden = n === 0;
    badge.setAttribute("aria-label", n + " pending " + (n === 1 ? "call" : "calls"));
  } catch (_) {
    badge.hidden = true;
  }
}
setInterval(refreshBadge, 3000);

// ---- runs ----

function runsPage() {
  const prompt = h("textarea", { name: "prompt", required: true, rows: 3 });
  const form = h("form", { class: "card", id: "start-form" },
    h("h2", { text: "Start a run" }),
    field("Prompt", prompt),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary", text: "Start" })));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const { id } = await api("POST", "v1/runs", { prompt: prompt.value, background: true });
      location.hash = "#/runs/" + enc(id);
    } catch (err) {
      notice(err.message, true);
    }
  });
  const filter = h("select", { name: "status" }, ["", "running", "awaiting_approval", "completed", "failed", "cancelled", "interrupted"]
    .map((s) => h("option", { value: s, text: s ? s.replace("_", " ") : "all" })));
  const tbody = h("tbody", { id: "runs" });
  const state = h("p", { class: "muted", role: "status" });
  const err = h("div");
  main.append(title("Runs"), form,
    h("div", { class: "row" }, field("Show", filter), state), err,
    h("table", {}, h("caption", { class: "sr-only", text: "Runs, newest first" }),
      h("thead", {}, h("tr", {}, ["Run", "Status", "Prompt", "Started by", "Created", "Pending"].map((c) => h("th", { scope: "col", text: c })))),
      tbody));
  const load = async () => {
    try {
      const q = filter.value ? "?status=" + enc(filter.value) : "";
      const { runs } = await api("GET", "v1/runs" + q);
      clear(err);
      runs.reverse();
      keyed(tbody, runs, (r) => r.id, (r) => {
        const tr = h("tr", {}, h("td", {}, h("a", { href: "#/runs/" + enc(r.id), text: r.id })), h("td"), h("td"), h("td"), h("td"), h("td"));
        fillRun(tr, r);
        return tr;
      }, fillRun);
      state.textContent = runs.length + " run(s) · updated " + new Date().toLocaleTimeString();
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  };
  filter.addEventListener("change", load);
  every(2000, load);
}

function fillRun(tr, r) {
  const c = tr.children;
  c[1].replaceChildren(statusBadge(r.status));
  c[2].textContent = r.prompt.length > 120 ? r.prompt.slice(0, 120) + "…" : r.prompt;
  c[3].textContent = r.started_by;
  c[4].textContent = when(r.created_at);
  c[5].textContent = String((r.pending || []).length || "");
}

// ---- deciding a paused call (the inbox and a run's page) ----

function decisionCard(run, p, onDecided) {
  const reason = h("input", { type: "text", name: "reason", maxlength: 4096 });
  const out = h("p", { role: "status" });
  const decide = async (approve) => {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", "v1/runs/" + enc(run.id) + "/decisions", { decisions: [{ call_id: p.call_id, approve, reason: reason.value }] });
      out.textContent = (approve ? "Approved" : "Rejected") + ": the run goes on.";
      card.dataset.decided = approve ? "approved" : "rejected";
      if (onDecided) onDecided();
    } catch (e) {
      out.replaceChildren(errorBox(e));
      for (const b of card.querySelectorAll("button")) b.disabled = false;
    }
  };
  // Call ids repeat across runs (call_1_1): the heading's id names both.
  const hid = "call-" + run.id + "-" + p.call_id;
  const card = h("article", { class: "card decision", "data-call-id": p.call_id, "aria-labelledby": hid },
    h("h3", { id: hid }, "Call ", h("code", { class: "tool-name", text: p.name }), " in run ",
      h("a", { href: "#/runs/" + enc(run.id), text: run.id })),
    facts([
      ["Why", p.reason ? h("span", { class: "reason", text: p.reason }) : "—"],
      ["Asked by", p.source === "trifecta" ? "trifecta (private data, untrusted content and a way out in one run)" : p.source],
      ["Call id", p.call_id],
      ["Inside the call", p.parent],
      ["Digest", h("code", { text: p.digest })],
      ["Prompt", run.prompt],
    ]),
    h("h4", { text: "Arguments" }),
    h("pre", { class: "args", text: pretty(p.arguments) }),
    field("Reason (recorded in the audit log; the model sees it on a rejection)", reason),
    h("div", { class: "row" },
      h("button", { type: "button", class: "primary approve", onclick: () => decide(true), text: "Approve" }),
      h("button", { type: "button", class: "danger reject", onclick: () => decide(false), text: "Reject" })),
    out);
  return card;
}

function approvalsPage() {
  const list = h("div", { id: "inbox" });
  const state = h("p", { class: "muted", role: "status" });
  const err = h("div");
  main.append(title("Approvals"), h("p", { text: "Calls paused for a person's decision, across runs. Approve or reject each; the run resumes." }), state, err, list);
  every(2000, async () => {
    try {
      const { runs } = await api("GET", "v1/runs?status=awaiting_approval");
      clear(err);
      const items = [];
      for (const r of runs) for (const p of r.pending || []) items.push({ r, p });
      // A decided card stays (with its outcome) until the next refresh
      // that no longer lists it.
      keyed(list, items, (x) => x.r.id + "/" + x.p.call_id, (x) => decisionCard(x.r, x.p, refreshBadge));
      state.textContent = items.length ? items.length + " call(s) await a decision" : "Nothing awaits a decision.";
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
}

// ---- one run ----

function runPage(id) {
  const head = h("div", { id: "run-head" });
  const pending = h("div", { id: "run-pending" });
  const result = h("div", { id: "run-result" });
  const list = h("ol", { class: "timeline", id: "timeline", "aria-live": "off", "data-connections": "0" });
  const stream = h("span", { class: "muted", id: "stream-state", role: "status" });
  const err = h("div");
  const traced = h("section", { id: "trace", "aria-labelledby": "trace-title" });
  main.append(title("Run " + id), err, head, pending, h("h2", {}, "Timeline ", stream), list, result, traced);
  const tl = new Timeline(list);
  let status = "";
  const signal = page.signal;

  const showRecord = (rec) => {
    status = rec.status;
    const cancel = h("button", { type: "button", class: "danger", text: "Cancel run" });
    cancel.addEventListener("click", async () => {
      try {
        await api("POST", "v1/runs/" + enc(id) + "/cancel", {});
        notice("Cancelling " + id);
      } catch (e) {
        notice(e.message, true);
      }
    });
    put(head, facts([
      ["Status", statusBadge(rec.status)],
      ["Prompt", rec.prompt],
      ["Session", rec.session ? (rec.session.user ? rec.session.user + "/" : "") + rec.session.session : ""],
      ["Started by", rec.started_by],
      ["Created", when(rec.created_at)],
      ["Updated", when(rec.updated_at)],
      ["Error", rec.error ? h("span", { class: "error", text: rec.error }) : ""],
    ]), ended.has(rec.status) ? null : cancel);
    keyed(pending, rec.status === "awaiting_approval" ? rec.pending : [], (p) => p.call_id, (p) => decisionCard(rec, p));
    result.replaceChildren();
    if (rec.result) {
      const r = rec.result;
      put(result, h("h2", { text: "Result" }), facts([
        ["Stop reason", r.stop_reason], ["Steps", String(r.steps)],
        ["Tokens", r.usage && r.usage.total_tokens ? r.usage.input_tokens + " in, " + r.usage.output_tokens + " out" : "not reported"],
      ]), h("pre", { id: "output", text: r.output || "" }), r.structured ? h("pre", { text: pretty(r.structured) }) : null);
    }
    if (rec.messages && rec.messages.length) {
      result.append(h("h2", { text: "Transcript at the last checkpoint" }), transcript(rec.messages));
    }
  };
  const load = async () => {
    try {
      showRecord(await api("GET", "v1/runs/" + enc(id)));
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
    showTrace(id, traced);
  };
  every(3000, async () => {
    if (status && !ended.has(status)) await showTrace(id, traced);
  });
  load().then(() => streamEvents("v1/runs/" + enc(id) + "/events", {
    signal,
    finished: () => ended.has(status),
    onState: (s, n) => {
      stream.textContent = "· " + s;
      list.dataset.connections = String(n);
    },
    onEvent: (ev) => {
      if (ev.event === "truncated") {
        tl.note("Earlier events were dropped: the server keeps the last ones only.");
        return;
      }
      if (ev.event === "reconnect") return;
      let data;
      try {
        data = JSON.parse(ev.data);
      } catch (_) {
        return;
      }
      tl.add(data);
      if (data.type === "status") {
        status = data.status;
        load();
      }
    },
  })).catch((e) => {
    if (!signal.aborted) err.replaceChildren(errorBox(e));
  });
}

// showTrace draws the run's trace (GET v1/runs/{id}/trace): what the
// event stream does not carry, each model call's time and tokens, each
// sandbox call's module, outcome, time and memory, and every verdict of a
// guard, policy or reviewer.
async function showTrace(id, box) {
  let t;
  try {
    t = await api("GET", "v1/runs/" + enc(id) + "/trace");
  } catch (e) {
    if (e.status === 404 && e.code !== "unknown_run") return; // a server without traces
    put(box, errorBox(e));
    return;
  }
  const rows = [];
  for (const ev of t.events || []) {
    const p = ev.payload || {};
    const a = p.attrs || {};
    const ms = p.duration_ms ? Math.round(p.duration_ms * 10) / 10 + " ms" : "";
    let kind, what;
    switch (ev.type) {
      case "llm_response":
        kind = "model call";
        what = ["step " + (p.step || "?"), ms, p.input_tokens || p.output_tokens ? (p.input_tokens || 0) + " in / " + (p.output_tokens || 0) + " out tokens" : "",
          p.finish_reason, p.tool_call_count ? p.tool_call_count + " tool call(s)" : "", p.error].filter(Boolean).join(" · ");
        break;
      case "sandbox_call":
        kind = "sandbox call";
        what = [p.name + " in " + (a.module || "?") + " (" + String(a.sha256 || "").slice(0, 12) + ")", a.outcome, ms,
          a.memory_peak ? "memory " + Math.round(a.memory_peak / 1024) + " KiB" : "",
          (a.grants_used || []).length ? "used " + a.grants_used.join(", ") : "", (a.denied || []).length ? "denied " + a.denied.join("; ") : "", p.error].filter(Boolean).join(" · ");
        break;
      case "tool_call_end":
        kind = "tool call";
        what = [p.name, p.status, ms, p.reason, p.error].filter(Boolean).join(" · ");
        break;
      default:
        if (!/deny|block|approval|guard|trifecta|tainted|truncated|disabled|mismatch|hook|unknown|cancelled|exceeded/.test(ev.type)) continue;
        kind = ev.type.replace(/_/g, " ");
        what = [p.name, p.verdict, p.status, p.reason, p.error, p.content_preview].filter(Boolean).join(" · ");
    }
    rows.push(h("tr", { "data-type": ev.type }, h("td", { text: new Date(ev.ts).toLocaleTimeString() }), h("td", { text: kind }), h("td", { text: what })));
  }
  const s = t.summary || {};
  put(box, h("h2", { id: "trace-title", text: "Trace" }),
    facts([
      ["Model calls", (s.llm_calls || 0) + (s.llm_ms ? " · " + Math.round(s.llm_ms) + " ms" : "") + (s.llm_errors ? " · " + s.llm_errors + " failed" : "")],
      ["Tool calls", (s.tool_calls || 0) + (s.tool_errors ? " · " + s.tool_errors + " errors" : "")],
      ["Refusals", Object.entries(s.refusals || {}).map(([k, v]) => k + ": " + v).join(", ") || "none"],
      ["Dropped", t.dropped ? t.dropped + " earlier events" : ""],
    ]),
    rows.length ? h("table", {}, h("caption", { class: "sr-only", text: "Model calls, sandbox calls and verdicts" }),
      h("thead", {}, h("tr", {}, ["Time", "What", "Detail"].map((c) => h("th", { scope: "col", text: c })))), h("tbody", {}, rows)) : null);
}

function transcript(messages) {
  return h("ol", { class: "transcript" }, messages.map((m) => h("li", {},
    h("strong", { text: m.role + ": " }),
    (m.parts || []).map((p) => {
      if (p.type === "text") return h("span", { text: p.text });
      if (p.tool_call) return h("div", {}, "calls ", h("code", { text: p.tool_call.name }), h("pre", { text: pretty(p.tool_call.arguments) }));
      if (p.tool_result) return h("div", {}, "result of ", h("code", { text: p.tool_result.name }), h("pre", { text: p.tool_result.content }));
      return h("span", { class: "muted", text: "[" + p.type + "]" });
    }))));
}

// ---- tools ----

function toolsPage() {
  const tbody = h("tbody", { id: "tools" });
  const detail = h("section", { id: "tool-detail", "aria-live": "polite" });
  const verifyOut = h("div", { id: "verify" });
  const err = h("div");
  const verify = h("button", { type: "button", text: "Verify approved files" });
  main.append(title("Tools"), h("p", { text: "The plugins directory: a module runs only once an operator approves its exact bytes with the capabilities chosen here." }),
    h("div", { class: "row" }, verify), verifyOut, err,
    h("table", {}, h("caption", { class: "sr-only", text: "Modules of the plugins directory" }),
      h("thead", {}, h("tr", {}, ["Module", "Status", "sha256", "Tools", "Grants", "Approved by", ""].map((c) => h("th", { scope: "col", text: c })))),
      tbody), detail);
  verify.addEventListener("click", async () => {
    try {
      const v = await api("GET", "v1/tools/verify");
      verifyOut.replaceChildren(h("div", { class: "card", role: "status" },
        h("p", { class: v.ok ? "verdict good" : "verdict bad", text: v.ok ? "Every approved file matches its approval." : "Some files do not match their approvals." }),
        h("ul", {}, v.files.map((f) => h("li", {}, h("code", { text: f.file }), " — " + f.status + (f.detail ? ": " + f.detail : "") + (f.error ? ": " + f.error : "")))),
        v.unapproved.length ? h("p", { text: "Not approved: " + v.unapproved.join(", ") }) : null));
    } catch (e) {
      verifyOut.replaceChildren(errorBox(e));
    }
  });
  const load = async () => {
    try {
      const d = await api("GET", "v1/tools");
      clear(err);
      if (!d.manifest_trusted) err.append(h("p", { class: "error", text: "The manifest is not trusted: " + (d.untrusted || "") }));
      keyed(tbody, d.plugins, (p) => p.file + "@" + p.sha256 + "@" + p.status, (p) => h("tr", { "data-file": p.file, "data-status": p.status },
        h("td", {}, h("code", { text: p.file })),
        h("td", {}, statusBadge(p.status), p.reason ? h("div", { class: "muted", text: p.reason }) : null),
        h("td", {}, h("code", { text: (p.sha256 || "").slice(0, 16) + "…" })),
        h("td", { text: (p.tools || []).join(", ") }),
        h("td", { text: (p.grants || []).join(", ") || "none" }),
        h("td", { text: p.approved_by || "" }),
        h("td", {}, h("button", { type: "button", class: "review", "aria-label": "Review " + p.file, onclick: () => review(p.file, detail, load), text: "Review" }))));
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  };
  every(3000, load);
}

async function review(file, detail, reload) {
  let m;
  try {
    m = await api("GET", "v1/tools/" + enc(file));
  } catch (e) {
    detail.replaceChildren(errorBox(e));
    return;
  }
  const requested = m.requested || [];
  const boxes = requested.map((g) => h("input", { type: "checkbox", name: "grant", value: g, checked: true }));
  const force = h("input", { type: "checkbox", name: "force" });
  const extra = h("input", { type: "text", name: "extra", disabled: true, placeholder: "fs.read:/data, net:api.example.com" });
  force.addEventListener("change", () => { extra.disabled = !force.checked; });
  const timeout = h("input", { type: "number", name: "timeout_ms", min: 0 });
  const memory = h("input", { type: "number", name: "memory_mb", min: 0 });
  const note = h("input", { type: "text", name: "note", maxlength: 4096 });
  const out = h("div", { role: "status" });
  const approve = h("button", { type: "submit", class: "primary", text: "Approve " + file });
  const form = h("form", { class: "card", id: "approve-form" },
    h("h3", { text: "Approve with grants" }),
    requested.length
      ? h("fieldset", {}, h("legend", { text: "Capabilities the module requests (uncheck to grant less)" }),
        boxes.map((b) => h("div", {}, b, " ", h("label", { for: b.id = "g-" + b.value.replace(/[^a-zA-Z0-9]/g, "_"), text: b.value }))))
      : h("p", { text: "The module requests no capabilities: it computes on its input only." }),
    h("div", { class: "row" }, force, h("label", { for: force.id = "force", text: "Force: grant what it does not request" })),
    field("Extra grants (comma-separated; only with force)", extra),
    h("div", { class: "row" }, field("Timeout per call (ms)", timeout), field("Memory (MiB)", memory)),
    field("Note (kept in the manifest's audit log)", note),
    approve, out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const grants = boxes.filter((b) => b.checked).map((b) => b.value);
    if (force.checked) grants.push(...extra.value.split(",").map((s) => s.trim()).filter(Boolean));
    const limits = {};
    if (timeout.value) limits.timeout_ms = Number(timeout.value);
    if (memory.value) limits.memory_mb = Number(memory.value);
    approve.disabled = true;
    out.replaceChildren();
    try {
      // The sha256 binds the approval to the bytes reviewed here.
      await api("POST", "v1/tools/" + enc(file) + "/approve", { sha256: m.sha256, grants, limits, note: note.value, force: force.checked });
      out.replaceChildren(h("p", { class: "verdict good", text: "Approved " + file + "." }));
      reload();
    } catch (err) {
      out.replaceChildren(errorBox(err));
    } finally {
      approve.disabled = false;
    }
  });
  const revokeNote = h("input", { type: "text", name: "revoke-note", maxlength: 4096 });
  const revoke = h("form", { class: "card", id: "revoke-form" }, h("h3", { text: "Revoke" }),
    field("Note", revokeNote), h("button", { type: "submit", class: "danger", text: "Revoke " + file }));
  revoke.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api("POST", "v1/tools/" + enc(m.sha256) + "/revoke", { note: revokeNote.value });
      notice("Revoked " + file);
      reload();
      review(file, detail, reload);
    } catch (err) {
      notice(err.message, true);
    }
  });
  const tools = ((m.describe || {}).tools || []).map((t) => h("div", { class: "card" },
    h("h4", {}, h("code", { text: t.name })), h("p", { text: t.description || "" }),
    h("details", {}, h("summary", { text: "Input schema" }), h("pre", { text: pretty(t.inputSchema || {}) })),
    t.outputSchema ? h("details", {}, h("summary", { text: "Output schema" }), h("pre", { text: pretty(t.outputSchema) })) : null));
  const heading = h("h2", { tabindex: "-1", text: "Review " + file });
  put(detail, heading,
    facts([
      ["Status", statusBadge(m.status)],
      ["sha256", h("code", { id: "tool-sha256", text: m.sha256 })],
      ["ABI", m.abi],
      ["Requested", requested.join(", ") || "nothing"],
      ["Sidecar", m.sidecar ? m.sidecar + " (" + m.sidecar_sha256 + ")" : ""],
      ["Why invalid", m.reason],
      ["Approved", m.approval ? "by " + m.approval.approved_by + " with " + ((m.approval.grants || []).join(", ") || "no grants") : ""],
    ]),
    m.status === "invalid" ? null : (m.status === "approved" ? revoke : form),
    tools.length ? h("h3", { text: "Tools and schemas" }) : null, tools);
  heading.focus();
}

// ---- sessions ----

function sessionsPage() {
  const tbody = h("tbody", { id: "sessions" });
  const err = h("div");
  main.append(title("Sessions"), err, h("table", {}, h("caption", { class: "sr-only", text: "Sessions" }),
    h("thead", {}, h("tr", {}, ["User", "Session", "Messages", "Updated"].map((c) => h("th", { scope: "col", text: c })))), tbody));
  every(5000, async () => {
    try {
      const { sessions } = await api("GET", "v1/sessions?all=true");
      clear(err);
      keyed(tbody, sessions, (s) => (s.user || "") + "/" + s.session + "/" + s.messages, (s) => h("tr", {},
        h("td", { text: s.user || "—" }),
        h("td", {}, h("a", { href: "#/sessions/" + enc(s.user || "-") + "/" + enc(s.session), text: s.session })),
        h("td", { text: String(s.messages) }), h("td", { text: when(s.updated) })));
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  });
}

async function sessionPage(user, name) {
  const path = "v1/sessions/" + enc(user) + "/" + enc(name);
  main.append(title("Session " + (user === "-" ? "" : user + "/") + name));
  try {
    const { session, entries } = await api("GET", path);
    const prompt = h("textarea", { name: "prompt", required: true, rows: 3 });
    const form = h("form", { class: "card" }, h("h2", { text: "Continue the conversation" }), field("Prompt", prompt),
      h("button", { type: "submit", class: "primary", text: "Start a run in this session" }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const { id } = await api("POST", path + "/runs", { prompt: prompt.value, background: true });
        location.hash = "#/runs/" + enc(id);
      } catch (err) {
        notice(err.message, true);
      }
    });
    main.append(facts([["Messages", String(session.messages)], ["Created", when(session.created)], ["Updated", when(session.updated)]]),
      form, h("h2", { text: "Messages" }), transcript(entries.map((e) => e.message)));
  } catch (e) {
    main.append(errorBox(e));
  }
}

// ---- evals ----

function evalsPage() {
  const tbody = h("tbody", { id: "evals" });
  const file = h("input", { type: "text", name: "file", required: true, placeholder: "cases.jsonl" });
  const k = h("input", { type: "number", name: "k", min: 1, max: 100, value: 1 });
  const form = h("form", { class: "card", id: "eval-form" }, h("h2", { text: "Run an eval" }),
    h("div", { class: "row" }, field("Case file (in the server's eval directory)", file), field("Runs per case (k)", k)),
    h("button", { type: "submit", class: "primary", text: "Start" }));
  const err = h("div");
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const { id } = await api("POST", "v1/evals", { file: file.value, k: Number(k.value) || 1 });
      notice("Started eval " + id);
      load();
    } catch (e2) {
      notice(e2.message, true);
    }
  });
  main.append(title("Evals"), form, err, h("table", {}, h("caption", { class: "sr-only", text: "Evals, newest first" }),
    h("thead", {}, h("tr", {}, ["Eval", "Status", "File", "k", "Passed", "pass@1", "pass^k", "Started by", "Created"].map((c) => h("th", { scope: "col", text: c })))), tbody));
  const pct = (x) => (x === undefined || x === null ? "" : Math.round(x * 1000) / 10 + "%");
  const fill = (tr, v) => {
    const c = tr.children;
    c[1].replaceChildren(statusBadge(v.status));
    c[2].textContent = v.file || "(inline cases)";
    c[3].textContent = String(v.k);
    c[4].textContent = v.cases ? v.passed + " of " + v.cases : "";
    c[5].textContent = v.has_report ? pct(v.pass_at_1) : "";
    c[6].textContent = v.has_report ? pct(v.pass_hat_k) : "";
    c[7].textContent = v.started_by;
    c[8].textContent = when(v.created_at);
  };
  const load = async () => {
    try {
      const { evals } = await api("GET", "v1/evals");
      clear(err);
      evals.reverse();
      keyed(tbody, evals, (v) => v.id, (v) => {
        const tr = h("tr", { "data-id": v.id }, h("td", {}, h("a", { href: "#/evals/" + enc(v.id), text: v.id })), h("td"), h("td"), h("td"), h("td"), h("td"), h("td"), h("td"), h("td"));
        fill(tr, v);
        return tr;
      }, fill);
    } catch (e) {
      err.replaceChildren(errorBox(e));
    }
  };
  every(3000, load);
}

async function evalPage(id) {
  main.append(title("Eval " + id));
  let r;
  try {
    r = await api("GET", "v1/evals/" + enc(id));
  } catch (e) {
    main.append(errorBox(e));
    return;
  }
  const pct = (x) => (x === undefined || x === null ? "—" : Math.round(x * 1000) / 10 + "%");
  const download = h("button", { type: "button", text: "Download the HTML report" });
  download.addEventListener("click", async () => {
    // The page needs the token too: fetched with it, saved as a file.
    try {
      const resp = await fetch("v1/evals/" + enc(id) + "/report.html", { headers: authHeaders({}), credentials: "omit", cache: "no-store" });
      if (!resp.ok) throw await errorOf(resp);
      const a = h("a", { href: URL.createObjectURL(await resp.blob()), download: id + ".html" });
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (e) {
      notice(e.message, true);
    }
  });
  main.append(h("div", { id: "eval-report" }, facts([
    ["Runs per case (k)", String(r.k)], ["Runs", String(r.runs)],
    ["pass@1", pct(r.pass_at_1)], ["pass^k", pct(r.pass_hat_k)], ["pass@k", pct(r.pass_at_k)],
    ["Tokens per success", r.tokens_per_success === null || r.tokens_per_success === undefined ? "not reported" : String(Math.round(r.tokens_per_success))],
  ]), download,
  h("h2", { text: "pass^k by k" }),
  h("ol", { class: "curve" }, (r.pass_hat_curve || []).map((v, i) => h("li", {},
    h("label", { for: "curve-" + i, text: "k=" + (i + 1) + " " }), h("meter", { id: "curve-" + i, min: 0, max: 1, value: v, text: pct(v) }), " " + pct(v)))),
  h("h2", { text: "Cases" }),
  h("table", {}, h("thead", {}, h("tr", {}, ["Case", "Passed", "Tokens"].map((c) => h("th", { scope: "col", text: c })))),
    h("tbody", { id: "eval-cases" }, (r.cases || []).map((c) => h("tr", { "data-case": c.id, class: c.passes < c.runs ? "error" : "" },
      h("td", {}, h("code", { text: c.id })), h("td", { text: c.passes + " of " + c.runs }), h("td", { text: c.tokens === null ? "" : String(c.tokens) }))))),
  (r.cases || []).filter((c) => (c.failures || []).length).map((c) => h("section", { class: "card" },
    h("h3", {}, "Failures of ", h("code", { text: c.id })),
    c.failures.map((f) => h("div", {}, h("p", { text: "Run " + (f.run + 1) + ": " + f.reason + " (" + f.steps + " steps)" }),
      h("ol", {}, (f.timeline || []).map((st) => h("li", {}, "step " + st.step + ": ", st.text || "",
        (st.calls || []).map((cl) => h("div", {}, h("code", { text: cl.name || "" }), " ", h("span", { class: "muted", text: JSON.stringify(cl) }))))))))))));
}

// ---- routing ----

function route() {
  page.abort();
  page = new AbortController();
  clear(main);
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  // A "." or ".." element would make a relative API path point at
  // another endpoint: no page has one.
  const name = parts.some((p) => p === "." || p === "..") ? "invalid" : parts[0] || "runs";
  for (const a of document.querySelectorAll("nav a[data-page]")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (name === "runs" && parts[1]) runPage(parts[1]);
  else if (name === "runs") runsPage();
  else if (name === "approvals") approvalsPage();
  else if (name === "tools") toolsPage();
  else if (name === "sessions" && parts.length >= 3) sessionPage(parts[1], parts.slice(2).join("/"));
  else if (name === "sessions") sessionsPage();
  else if (name === "evals" && parts[1]) evalPage(parts[1]);
  else if (name === "evals") evalsPage();
  else main.append(title("Not found"), h("p", {}, "No page " + location.hash + ". ", h("a", { href: "#/runs", text: "See the runs." })));
  const t = main.querySelector("h1");
  if (t && document.activeElement !== document.getElementById("token")) t.focus();
  refreshBadge();
}

window.addEventListener("hashchange", route);
showTokenState();
route();
