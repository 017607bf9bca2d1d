// dom.js: building the page from data. Text goes in as text nodes, never
// as markup: the console never parses a string as HTML (a test checks), so a prompt,
// a tool's result or a module's description cannot inject script even
// where the Content-Security-Policy would not stop it.

// h makes an element: attrs are attributes (on* keys add listeners,
// "text" sets the text), children are nodes or strings.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = String(v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// pretty shows a JSON value indented (a string that holds JSON too).
export function pretty(v) {
  if (typeof v === "string") {
    try {
      return JSON.stringify(JSON.parse(v), null, 2);
    } catch (_) {
      return v;
    }
  }
  return JSON.stringify(v, null, 2);
}

export function statusBadge(status) {
  return h("span", { class: "status status-" + status, "data-status": status, text: status.replace("_", " ") });
}

export function when(t) {
  if (!t) return "";
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "").map(([k, v]) => [h("dt", { text: k }), h("dd", {}, v)]));
}

// field is a labelled control: label text, then the control (its id ties
// them).
let nextId = 0;
export function field(label, control, hint) {
  if (!control.id) control.id = "f" + ++nextId;
  const parts = [h("label", { for: control.id, text: label }), control];
  if (hint) {
    const hid = control.id + "-hint";
    control.setAttribute("aria-describedby", hid);
    parts.push(h("span", { id: hid, class: "muted", text: hint }));
  }
  return h("div", { class: "field" }, parts);
}

// keyed keeps the children of parent in step with items: a child is made
// once per key (make) and refreshed in place (update), so a refresh keeps
// what a person typed and where the focus was.
export function keyed(parent, items, keyOf, make, update) {
  const old = new Map();
  for (const el of Array.from(parent.children)) old.set(el.dataset.key, el);
  let prev = null;
  for (const it of items) {
    const k = keyOf(it);
    let el = old.get(k);
    if (el) {
      old.delete(k);
      if (update) update(el, it);
    } else {
      el = make(it);
      el.dataset.key = k;
    }
    const want = prev ? prev.nextSibling : parent.firstChild;
    if (want !== el) parent.insertBefore(el, want);
    prev = el;
  }
  for (const el of old.values()) el.remove();
}

// put replaces el's children with kids (arrays flattened; null, false
// and undefined left out).
export function put(el, ...kids) {
  el.replaceChildren(...kids.flat(Infinity).filter((k) => k !== null && k !== undefined && k !== false));
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}
