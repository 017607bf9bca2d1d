// Package loop is the agent loop: it sends the conversation to a model,
// runs the tools the model asks for under guards and the host's policy, and
// repeats until the model answers, within bounds the host sets.
//
//	tools, _ := tool.NewRegistry(weather)
//	agent := &loop.Agent{
//		Provider: provider,                        // any llm.Provider
//		Tools:    tools,
//		System:   "You are a weather assistant.",
//		Bounds:   loop.Bounds{MaxSteps: 6, TokenBudget: 20_000},
//	}
//	res, err := agent.Run(ctx, "Do I need an umbrella in Oslo?")
//	var stop *loop.StopError
//	switch {
//	case errors.As(err, &stop):
//		// A bound, an approval pause or cancellation: res is valid and
//		// stop.State resumes the run (raise the bound, approve, retry).
//	case err != nil:
//		return err // the provider failed; see *loop.RunError for the state
//	}
//	fmt.Println(res.Output)
//
// # Runs
//
// [Agent.Run] starts from [system prompt, user prompt]; [Agent.RunMessages]
// from a caller's history. [Agent.Stream] yields the same run as events:
// text and reasoning deltas from the provider's native stream, tool starts
// and ends, corrections, approval requests, and a final EventDone carrying
// the [Result]. [Agent.Resume] continues a [RunState]. An Agent is
// configuration: runs never modify it, so one Agent serves any number of
// concurrent runs (10 000 at once is tested).
//
// A run ends in one of four ways, and the caller always gets the state:
//
//   - the model answered: a *Result with StopReason "done" and a nil error;
//   - a bound stopped it (max steps, token budget, approval, cancellation):
//     a *Result with its StopReason and a *[StopError] (errors.Is matches
//     ErrMaxSteps, ErrTokenBudget, ErrApprovalRequired, ErrCancelled) whose
//     State resumes the run;
//   - it failed (provider error, checkpoint or journal failure, replay
//     divergence): a nil Result and a *[RunError] holding the state after
//     the last completed step;
//   - a Stream consumer stopped iterating: everything stops (the model call
//     and running tools see their context cancelled) and no goroutine
//     outlives the iteration.
//
// # Tools
//
// The calls of one turn are decided first (guards, policy, approvals),
// then run, at most [Agent].MaxParallelTools at once (8 by default), and
// their results enter the transcript in the model's call order. Each call
// gets a run-unique id: an empty or repeated id from the provider is
// replaced by "call_<step>_<n>" before anything else sees the call. The model
// sees [tool.Result.Text]; failures are error results it can react to: a
// tool's own failure, an unknown tool, invalid arguments, a panic, and a
// tool's Go error, which is also traced as an infrastructure failure.
// [Bounds] cap what results cost: MaxToolResultChars keeps head and tail
// around a marker ("[TRUNCATED — N of M characters omitted…]") and never
// exceeds the bound, marker included (an untrusted result's frame is added
// around the bounded text); PruneToolResultsAfter replaces old
// results by a note ("[PRUNED — …]") in what is sent to the model only.
//
// # Early starts while the model streams
//
// In a streamed run, a call to a tool flagged Idempotent starts as soon as
// the provider reports it complete (OpenAI-compatible servers when the next
// call opens, Anthropic at the end of its block, Gemini at once), while the
// rest of the answer is still arriving, provided that call alone passes
// every check of the tool phase: the loop guard (counting the calls of the
// turn announced so far), the trifecta guard, the policy (told
// [PolicyInput].Early) and human decisions. Any refusal, approval or
// shadowed verdict only means "not early". At most [Agent].MaxEarlyTools
// (4) run at once, within MaxParallelTools together with the tool phase's
// calls. The tool phase decides every call as usual, then awaits an early
// call's result instead of running it: the call runs once, and the stream
// events, transcript, journal entries and recording are those of a run
// without early starts; only the trace shows the overlap
// (tool_call_early_start, a tool span opening before llm_response, and
// run_end's early_tool_calls). A call the final answer lacks, one the tool
// phase refuses, and every early call of a turn that pauses or fails is
// cancelled, its result discarded (tool_call_early_discarded); the run
// waits for it before run_end. Such a call may leave its journal entries
// ("started", and "finished" when it completed): a later turn with the
// same call id finds them as for any call of an idempotent tool. Set MaxEarlyTools to -1 to switch early
// starts off.
//
// # Guards, policy and approval: the security model
//
// Every call passes one gate, before any call of its turn runs: an
// ordered chain of checks, the first refusal ending it. The tool-call
// bound, tool search, code mode only, the pre-tool hooks, the loop guard
// (MaxRepeatedToolCalls: "RepeatedCall: …"), the lethal-trifecta guard
// (an egress tool after untrusted content: "EgressBlocked: …", or an
// approval pause), then the host's [Policy], then human decisions (the
// hooks and the policy are the agent's [Checks]). Each
// refusal is a typed refusal.Refusal (package loop/refusal): its kind is
// in the result ([llm.ToolResult].Refusal) and survives checkpoints;
// read it with refusal.Of, never from the text. The rules are
// fail-closed:
//
//   - a check that fails refuses the call: a policy that returns an error,
//     panics, or returns an unknown verdict ("ToolPolicyDenied: policy
//     error: …"), a pre-tool hook that does ("ToolHookDenied: …");
//   - built-in guards run first and the policy can only add refusals; a
//     human approval never overrides a refusal; a human can reject any call;
//   - an approval pause executes nothing of its turn; Resume runs approved
//     calls exactly once and tells the model about rejected ones; a
//     decision applies only to the call it was given for (its tool and
//     arguments, [PendingCall.Digest]);
//   - a call a tool makes through [CallNested] passes the same gate as the
//     model's, counts as one, and runs at most once across the tool's
//     re-runs (RunState.Nested);
//   - taint is monotonic: results of tools flagged untrusted (or whose tool
//     called tool.ReportTaint, as sub-agents do) are framed as data
//     between markers (forged markers defused), flagged
//     [llm.ToolResult].Untrusted, and taint the run; pruning, delegation,
//     memory compaction (a sentinel [IsTainted] reads) and resume keep it,
//     and a sub-agent starts with its caller's taint;
//   - shadow mode (Bounds.ShadowGuards) only traces what the two built-in
//     guards would refuse; it never weakens the policy or the approve mode;
//   - a checkpoint or journal failure stops the run, and a call whose start
//     could not be journaled does not run.
//
// Policies can be data: package policy compiles a JSON policy file
// (policy.Parse, policy.Load) with strict validation (errors name the
// position) and deny > approve > allow precedence, into a Policy that may
// switch guardrails on too ([PolicyGuardrails]). [Agent.AuditTrifecta] lists risky tool combinations at boot.
//
// # Durable runs
//
// [Agent].Checkpoint receives the state before each turn's tools run,
// after each completed step and correction, and when the run stops.
// [Agent].Journal records each call before and after it runs. Together they
// make side effects exactly-once across a crash between "executed" and
// "checkpointed": on resume a journaled result is reused, a call started
// but not finished is reported to the model as "OutcomeUnknown: …" instead
// of being repeated (unless its tool is flagged Idempotent), and
// [CallInfo.IdempotencyKey] lets a tool make a service deduplicate. A
// [FileStore] keeps both on disk.
//
// # Record and replay
//
// [Agent].Recorder writes model responses and tool results to JSONL
// (secrets redacted by default); [Replay] plays it back fully offline or
// with the real tools, and a divergence is a *[ReplayMismatch] naming the
// step. A recorded run is a free regression test.
//
// # Delegation
//
// [Agent.AsTool] turns an agent into a tool (a stateless sub-run per call)
// and [Delegate] sends requests to several specialists at once. Sub-runs
// report their token spend to the caller's budget ([ReportUsage]) and their
// taint; a sub-agent failure is an error result for the caller.
//
// # Tracing
//
// With [Agent].Tracer set, a run emits a span tree (run, model calls, tool
// calls, guard and policy events) through package trace, secrets redacted.
// Without one, tracing costs a nil check: no preview is even built.
package loop
