// Package serve is the HTTP API of an agent: runs started, watched,
// decided and cancelled over HTTP, with their traces, evals, the session
// store and the plugins directory, described by the OpenAPI document it
// serves at /openapi.json.
//
//	srv, err := serve.New(serve.Options{Agent: agent, Dir: "runs"})
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	http.ListenAndServe("127.0.0.1:8080", srv)
//
// An autoagent Runtime is served with Options.Agent = rt.Agent() and
// Options.Sessions = rt.Sessions(); `autoagent serve` is the command. ExampleNew starts a run and reads it.
//
// # Runs
//
// POST /v1/runs {"prompt", "background"} starts a run ({"id"} when in
// the background); GET /v1/runs/{id} answers its status (running,
// awaiting_approval, completed, failed, cancelled, interrupted), its
// pending calls and, once ended, its result (the `run --json` object).
// POST /v1/runs/{id}/decisions approves or rejects paused calls; GET
// /v1/runs/{id}/events streams its events as Server-Sent Events,
// resumable with Last-Event-ID. With Options.Dir the runs outlive the
// server: a paused run is decided after a restart, one that was going
// is listed as interrupted with its transcript.
//
// # Traces
//
// GET /v1/runs/{id}/trace answers the run's trace events (run, model and
// tool calls, refusals, guardrail verdicts, approvals, checkpoints; the
// events of package trace, with the run's id as run_id) and the summary
// trace.Summarize computes of them, as `autoagent trace summarize` does.
// Each run has a tracer of its own that hands every event on to the
// agent's tracer, so a --trace file still gets them all.
//
// # Evals
//
// POST /v1/evals runs a case file of Options.EvalDir, or cases given
// inline, in the background, one eval at a time; GET /v1/evals lists
// them with their pass counts, GET /v1/evals/{id} answers the report
// (`autoagent eval --json`) and /v1/evals/{id}/report.html its page.
// Names are relative to the eval directory and nothing outside it is
// read: a name with "..", an absolute one, or one that reaches out
// through a symbolic link is refused (403), for the cases' scripts too.
// The files are opened through an os.Root of the directory, so the
// lookup itself, not only the spelling of the name, keeps inside.
//
// # Notifications
//
// With Options.Webhook, a run that awaits a decision and a run that ends
// are notified by a signed POST (see Webhook), sent from a queue of its
// own: a slow or dead receiver never holds up a run.
//
// # The console
//
// GET / serves the operator console, a page embedded in the binary
// (console/*.html, *.js, *.css; no build step, nothing loaded from
// elsewhere) under Content-Security-Policy default-src 'self': the runs,
// a run's timeline streamed from its events with its trace, an approvals
// inbox across runs, the plugins directory (review, approve with chosen
// grants, revoke, verify), sessions and evals. Its files need no token (a
// page load carries none; they hold no data); its calls to the API send
// the token the person entered as Authorization: Bearer, the event stream
// too (read with fetch, resumed with Last-Event-ID). A server without
// tokens serves it to loopback peers only.
//
// # Security
//
// Without Options.Tokens only loopback peers are served. With them,
// every request needs Authorization: Bearer TOKEN, and the token's role
// bounds what it may do: a viewer reads, a runner also starts and cancels
// runs and starts evals, an operator also decides calls and approves
// modules. There are no cookies, so no cross-site request forgery; Host
// and Origin are checked against DNS rebinding; bodies, event streams and
// the events kept are bounded. Every decision, cancellation and eval
// started is in Dir/audit.jsonl with the token's name as "by".
package serve
