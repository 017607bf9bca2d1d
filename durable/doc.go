// Package durable runs agents as Temporal workflows, so that a run
// outlives the machine that started it: a worker that dies mid-tool, a
// server restart, an approval that arrives hours later.
//
//	// A worker: the agent, its provider key and its tools live here.
//	c, err := client.Dial(client.Options{HostPort: "localhost:7233"})
//	if err != nil {
//		log.Fatal(err)
//	}
//	w := durable.NewWorker(c, "", &durable.Activities{Agent: agent})
//	go w.Run(worker.InterruptCh())
//
//	// A client, anywhere: it needs no key.
//	runs := &durable.Client{Temporal: c}
//	id, err := runs.Start(ctx, "refund-42", durable.RunInput{Prompt: "Refund order 42"}, durable.Options{})
//	st, err := runs.Status(ctx, id) // step, usage, transcript, pending approvals
//	if st.State == "awaiting_approval" {
//		_, err = runs.Decide(ctx, id, durable.Decision{CallID: st.Pending[0].Call.ID, Approved: true})
//	}
//	res, err := runs.Result(ctx, id) // the *loop.Result a local run returns
//
// # How a run executes
//
// The workflow ([Run]) runs the agent loop itself, the same loop.Agent as
// a local run, so its bounds, policy file and guardrails, taint and
// approvals hold unchanged. Whatever is not deterministic is an activity
// of the worker ([Activities]): the agent's description once at the start,
// each model call, each tool call, and each decision of a policy written
// in Go. A model call is retried when the provider's error is retryable;
// an idempotent tool is retried; any other tool runs at most once, and a
// call whose worker was lost is reported to the model as OutcomeUnknown,
// never run twice. A tool runs with loop.CallInfoFrom(ctx) giving the
// run's idempotency key (the workflow ID and the call ID).
//
// The description, a Go policy's decision and the call of a tool whose
// flags say Idempotent are local activities: they run inside the workflow
// task on the worker that holds it, which halves a run's tasks. A local
// call is bounded (5 s, and 512 KiB of results per workflow task); past
// either, or when its attempt fails, it runs again as the Tool activity.
// Its result is in the history only once the workflow task completes, so
// a worker lost before that runs it again on another worker, under the
// same key: the reason a tool that is not idempotent never runs locally.
// Options.LocalModelCalls makes the model calls local activities too: a
// run whose tools are idempotent is then one workflow task, 4–6× the
// runs per second, at the cost of the run's state being unreadable while
// a model call runs (the query waits for the workflow task) and of a lost
// worker repeating its last 8 s of model calls. See RATIONALE.md, "Why
// are an idempotent tool's calls local activities, and what does that
// change on a worker crash?" and "Why are model calls activities, and
// local ones only on request?".
//
// The run's state is the workflow's: the [QueryState] query answers a
// [Status]; decisions for pending calls are the [UpdateDecide] update,
// validated before they enter the history (a call that is not pending is
// refused) and applied exactly once. Cancelling the workflow cancels the
// running tool and ends the run cancelled, with its transcript. A long
// run continues as new at a step boundary, carrying its state.
//
// Determinism: the loop in the workflow gets no clock, randomness or
// goroutines (see RATIONALE.md, "How is the workflow kept
// deterministic?"); the histories in testdata replay against the code in
// the tests.
//
// A sub-agent (loop.Agent.AsTool) is a child workflow, "RUN/CALL",
// running the sub-agent's loop the same way; its spend counts in the
// parent and its taint taints it. Decisions for its calls go to the
// child's run. A Delegate tool's requests are child workflows too
// ("RUN/CALL/N"), those to different specialists at once.
//
// # Code mode
//
// An agent in code mode (loop.Agent.CodeMode) offers run_program in a
// durable run too, and its programs run on the workers, with the
// worker's runner (jsprogram's). The workflow cannot run a program
// itself (the engine is no workflow code: it runs goroutines and
// compiles machine code), nor can a worker let the program's calls
// through (the gate is the run's, in the workflow). So a program runs as several Program
// activities: each runs it from its start against the record of the
// calls it made so far, answering them from the record, and stops at its
// first call past the record. That call passes the run's gate in the
// workflow (loop.CallNested: policy, guards, approval, taint) and runs as
// a Tool activity like any call; its result joins the record, and the
// program runs again, until it needs no call. A program of n calls is
// n+1 Program activities; Config.MaxCalls bounds n.
//
// A worker that dies mid-program loses nothing: a Program activity has
// no effect of its own (the program's only effects are its calls), so
// it is retried on another worker, which gets the same record. A call the
// program made is a Tool activity of its own: once it completed, a
// retried program gets its result from the record and does not make it
// again; a call of a tool that is not idempotent whose worker died is
// OutcomeUnknown to the program, never run twice. A call awaiting
// approval pauses the run with the call pending under the id
// "<run_program call>/<n>"; after the decision the program runs again
// from its start, and the calls it made before get their recorded
// results. See RATIONALE.md, "Why does a durable program run as one
// activity per call it makes?".
//
// Not yet carried by a durable run: memory and Go hooks (PostTurn, tool
// hooks), which the worker refuses with an error saying so; and calls a
// tool other than run_program makes through loop.CallNested (a module
// granted tools:NAME), which a worker refuses (loop.ErrNotInRun).
package durable
