// Package eval measures how reliably an agent does its job. A case is a
// prompt and a deterministic check (declarative matchers, a Go predicate,
// or both; never a model's judgement); RunK runs every case k times with
// a fresh agent and reports pass@1, pass^k (every one of the k runs
// passes), pass@k and the pass^j curve, with tokens and cost per success,
// where unreported usage stays unknown rather than zero:
//
//	cases, err := eval.LoadCases("cases.jsonl")
//	rep, err := eval.RunK(ctx, newAgent, cases, eval.Options{K: 8, Concurrency: 4})
//	fmt.Printf("pass^8 %.2f, pass@1 %.2f\n", rep.PassHatK, rep.PassAt1)
//	err = eval.WriteHTML(f, rep, eval.HTMLOptions{})
//
// See the package example for a runnable suite.
//
// The rest of the package: [FromRecording] turns a recorded run into a
// regression case that replays offline; [Cascade] runs the cheapest tier
// first and escalates only when the host's check refuses the answer;
// [TrajectoryOf] reads the tool calls of a transcript for assertions on
// their order and arguments, refusals and taint. [WriteText] and
// [WriteHTML] render a [Report]; autoagent eval is the command line over
// all of it.
package eval
