// sse.js: a run's event stream read with fetch. EventSource cannot send
// an Authorization header, so the console parses text/event-stream itself
// and resumes after a break with Last-Event-ID, as EventSource would.

import { APIError, authHeaders, errorOf } from "./api.js";

// SSEParser turns text/event-stream chunks into events {id, event, data}.
// id is the last id seen (it carries over, as the standard says).
export class SSEParser {
  constructor(emit) {
    this.emit = emit;
    this.buf = "";
    this.lastId = "";
    this.reset();
  }

  reset() {
    this.event = "";
    this.data = [];
    this.hasData = false;
  }

  push(chunk) {
    this.buf += chunk;
    for (;;) {
      const i = this.buf.search(/\r\n|\r|\n/);
      if (i < 0) return;
      // A lone CR at the end may be the first half of CRLF.
      if (this.buf[i] === "\r" && i === this.buf.length - 1) return;
      const line = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + (this.buf.startsWith("\r\n", i) ? 2 : 1));
      this.line(line);
    }
  }

  line(line) {
    if (line === "") {
      if (this.hasData) {
        this.emit({ id: this.lastId, event: this.event || "message", data: this.data.join("\n") });
      }
      this.reset();
      return;
    }
    if (line[0] === ":") return; // a comment: the server's heartbeat
    const c = line.indexOf(":");
    const field = c < 0 ? line : line.slice(0, c);
    let value = c < 0 ? "" : line.slice(c + 1);
    if (value[0] === " ") value = value.slice(1);
    switch (field) {
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        this.hasData = true;
        break;
    }
  }
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// streamEvents reads path's events until the stream ends with finished()
// true, or signal aborts. Each event goes to onEvent; onState hears
// "connecting", "live", "reconnecting", "ended". A break (network, the
// server's stream time limit, a server restart) reconnects from the last
// event received. An answer the API refuses (401, 403, 404) throws.
export async function streamEvents(path, { onEvent, onState, finished, signal }) {
  let lastId = "";
  let delay = 250;
  let connections = 0;
  while (!signal.aborted) {
    const headers = authHeaders({ "Accept": "text/event-stream" });
    if (lastId) headers["Last-Event-ID"] = lastId;
    onState(connections === 0 ? "connecting" : "reconnecting", connections);
    let resp;
    try {
      resp = await fetch(path, { headers, signal, credentials: "omit", cache: "no-store", redirect: "error" });
    } catch (e) {
      if (signal.aborted) return;
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 10000);
      continue;
    }
    if (!resp.ok) {
      const err = await errorOf(resp);
      if (resp.status !== 503 && resp.status !== 502 && resp.status !== 504) throw err;
      await sleep(Math.max(delay, 1000 * (Number(resp.headers.get("Retry-After")) || 0)), signal);
      delay = Math.min(delay * 2, 10000);
      continue;
    }
    connections++;
    delay = 250;
    onState("live", connections);
    const parser = new SSEParser((ev) => {
      lastId = ev.id || lastId;
      onEvent(ev);
    });
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
    } catch (e) {
      if (signal.aborted) return;
    }
    if (finished()) {
      onState("ended", connections);
      return;
    }
    await sleep(delay, signal);
  }
}

export { APIError };
