// Package codemode is code mode: instead of calling tools one at a time,
// the model writes one program that calls them, and the program runs in
// the sandbox under the run's guards.
//
//	h, _ := host.New(ctx, sandbox.HostOptions(nil)) // a program's calls → loop.CallNested
//	programs, err := jsprogram.New(ctx, h, jsprogram.Options{})
//	if err != nil {
//		return err
//	}
//	defer programs.Close(ctx)
//	agent := &loop.Agent{
//		Provider: provider,
//		Tools:    tools, // get_order, refund, …
//		CodeMode: codemode.Config{Mode: codemode.Only, Runner: programs},
//	}
//	res, err := agent.Run(ctx, "Total the refunds of orders 1 to 12")
//
// The model is offered run_program ([ToolName]), whose description carries
// the run's tools as TypeScript-style declarations ([Declarations]); it
// answers with one call:
//
//	{"code": "let total = 0\nfor (let id = 1; id <= 12; id++) {\n  total += (await tools.get_order({id})).refund\n}\nreturn total"}
//
// and gets {"result": 540} back: one model round trip instead of twelve.
//
// # The gate, unchanged
//
// Every call a program makes reaches the run through loop.CallNested and
// passes what a direct call passes: the tool-call bound and the loop guard
// (which count it), the pre-tool hooks, the trifecta, the policy, human
// approval, the post-tool hooks and the tool-result guardrails; an
// untrusted result taints the program's result and the run. A refused or
// failed call throws in the program, which may catch it. A program calls
// only the tools declared to it (tool search applies), never run_program,
// and at most [Config].MaxCalls.
//
// # Approvals, exactly once
//
// A call awaiting approval pauses the run. After the decision the program
// runs again from its start, and the calls it made before get their
// recorded results instead of running again; a re-run that makes another
// call at that place is refused (Diverged), never run. This needs the
// program to be deterministic: the engine gives it a fixed clock and a
// seeded random source. The same holds across a checkpoint's resume and
// for record/replay. See RATIONALE.md, "Why does a program run again from
// its start after an approval?".
//
// # Languages
//
// Programs are JavaScript (codemode/jsprogram) unless the runner says
// otherwise: [ByLanguage] runs each program with its language's runner
// (codemode/pyprogram runs Python: tools.get_order(id=7), a refusal
// raises ToolError, return gives the result), and [SpecFor] declares the
// languages offered in run_program's schema and description. The tools are
// declared once, in TypeScript, whatever the languages.
//
// # Modes
//
// [Off] (the zero value) offers no program tool; [Also] offers it beside
// the tools; [Only] offers it alone: a direct call of another tool is
// refused, pointing at run_program.
package codemode
