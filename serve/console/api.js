// api.js: the console's calls to the JSON API. Every request is same
// origin, sends no cookie, and carries the token the person entered as
// "Authorization: Bearer" (the API takes nothing else). The token lives in
// sessionStorage: this tab only, gone when it closes.

const tokenKey = "autoagent.token";

export function token() {
  return sessionStorage.getItem(tokenKey) || "";
}

export function setToken(t) {
  if (t) sessionStorage.setItem(tokenKey, t);
  else sessionStorage.removeItem(tokenKey);
}

// authHeaders adds Authorization to headers when a token was entered.
export function authHeaders(headers) {
  const t = token();
  if (t) headers["Authorization"] = "Bearer " + t;
  return headers;
}

// APIError is a refused or failed call: status 0 when the server did not
// answer; code and message from the API's {"error": {...}} body.
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// errorOf reads an error answer's {"error": {"code", "message"}}.
export async function errorOf(resp) {
  let code = "http_" + resp.status;
  let message = resp.status + " " + resp.statusText;
  try {
    const body = await resp.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (_) {
    // Not JSON: the status line says enough.
  }
  if (resp.status === 401) message += token() ? " (the token was refused: enter another)" : " (enter a token above)";
  return new APIError(resp.status, code, message);
}

// api calls method path (relative to the console's page, so the console
// works where the server is mounted) with an optional JSON body.
export async function api(method, path, body) {
  const headers = authHeaders({ "Accept": "application/json" });
  const init = { method, headers, credentials: "omit", cache: "no-store", redirect: "error" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, "network", "the server did not answer: " + e.message);
  }
  if (!resp.ok) throw await errorOf(resp);
  return resp.json();
}

// enc encodes one path element.
export const enc = encodeURIComponent;
