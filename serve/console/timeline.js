// timeline.js: a run's events (GET v1/runs/{id}/events) drawn as a
// timeline. Each event type of the stream has its drawing: model steps
// with their text and reasoning, tool calls with arguments, results and
// how long they took, calls refused before running, guardrail
// corrections, approval pauses, decisions and status changes.

import { h, pretty } from "./dom.js";

const ms = (a, b) => Math.max(0, new Date(b) - new Date(a));

export class Timeline {
  constructor(list) {
    this.list = list;
    this.seen = new Set();
    this.step = -1;
    this.calls = new Map(); // call id -> {item, start}
    this.open = null; // the text or reasoning item being streamed into
    this.duplicates = 0; // events received twice (a resume that repeated)
  }

  item(ev, kind, label, ...body) {
    const li = h("li", { class: "ev-" + kind, "data-seq": ev.seq || null, "data-type": ev.type },
      h("span", { class: "when", text: ev.time ? new Date(ev.time).toLocaleTimeString() : "" }),
      h("span", { class: "kind", text: label }), body);
    this.list.append(li);
    return li;
  }

  // add draws one event; an event already drawn (a resumed stream sends
  // none again, but a page may reconnect twice) is skipped.
  add(ev) {
    if (ev.seq) {
      if (this.seen.has(ev.seq)) {
        this.list.dataset.duplicates = String(++this.duplicates);
        return;
      }
      this.seen.add(ev.seq);
    }
    if (ev.step && ev.step !== this.step && ["text", "reasoning", "tool_start", "correction"].includes(ev.type)) {
      this.step = ev.step;
      this.open = null;
      this.item({ type: "step", time: ev.time }, "step", "Model call · step " + ev.step);
    }
    switch (ev.type) {
      case "text":
      case "reasoning": {
        if (!this.open || this.open.type !== ev.type) {
          const p = h("p");
          const li = this.item({ ...ev, seq: 0 }, ev.type, ev.type === "text" ? "Answer" : "Reasoning", p);
          this.open = { type: ev.type, p, li };
        }
        this.open.p.append(h("span", { "data-seq": ev.seq || null, text: ev.text || "" }));
        return;
      }
      case "tool_start": {
        this.open = null;
        const call = ev.call || {};
        const li = this.item(ev, "tool", "Tool call ",
          h("code", { class: "tool-name", text: call.name }),
          h("span", { class: "muted", text: " · " + call.id }),
          h("pre", { class: "args", "aria-label": "arguments of " + call.name, text: pretty(call.arguments) }));
        li.dataset.callId = call.id || "";
        if (ev.refused) li.classList.add("ev-refused");
        this.calls.set(call.id, { li, start: ev.time });
        return;
      }
      case "tool_end": {
        this.open = null;
        const call = ev.call || {};
        const res = ev.result || {};
        let c = this.calls.get(call.id);
        if (!c) {
          // The start was dropped (a truncated stream): draw the call here.
          this.add({ ...ev, seq: 0, type: "tool_start" });
          c = this.calls.get(call.id);
        }
        let verdict;
        if (ev.refused) {
          c.li.classList.add("ev-refused");
          verdict = h("span", { class: "verdict bad", text: "Refused before running (guard, policy or reviewer)" });
        } else if (res.is_error) {
          c.li.classList.add("ev-error");
          verdict = h("span", { class: "verdict bad", text: "Error result" });
        } else {
          verdict = h("span", { class: "verdict good", text: "Result" });
        }
        const took = c.start && ev.time ? " · took " + ms(c.start, ev.time) + " ms" : "";
        c.li.append(h("div", { class: "result", "data-seq": ev.seq }, verdict, h("span", { class: "muted", text: took }),
          h("pre", { class: "content", text: res.content || "" })));
        c.li.dataset.ended = "true";
        return;
      }
      case "correction":
        this.open = null;
        this.item(ev, "correction", "Guardrail correction", h("p", { text: ev.text }));
        return;
      case "approval_request":
        this.open = null;
        this.item(ev, "approval_request", "Paused: " + (ev.pending || []).length + " call(s) need a decision",
          h("ul", {}, (ev.pending || []).map((p) => h("li", {},
            h("code", { text: p.name }), " · ", p.call_id,
            p.reason ? h("div", {}, "Why: ", h("span", { class: "reason", text: p.reason }), p.source ? h("span", { class: "muted", text: " (" + p.source + ")" }) : null) : null,
            h("pre", { text: pretty(p.arguments) })))));
        return;
      case "decision":
        this.open = null;
        this.item(ev, ev.approve ? "decision" : "refused", (ev.approve ? "Approved " : "Rejected ") + ev.call_id + " by " + ev.by,
          ev.reason ? h("p", { text: "Reason: " + ev.reason }) : null);
        return;
      case "status":
        this.open = null;
        this.item(ev, "status", "Status: " + String(ev.status).replace("_", " "));
        return;
      default:
        this.item(ev, "other", ev.type, h("pre", { text: pretty(ev) }));
    }
  }

  // note draws what the stream said about itself (events dropped).
  note(text) {
    this.list.append(h("li", { class: "ev-note" }, h("span", { class: "kind", text: text })));
  }
}
