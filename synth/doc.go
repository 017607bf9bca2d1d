// Package synth lets a model write its own tools, which run in the
// WebAssembly sandbox with no capabilities unless the host allows them:
// create_tool during an agent run, and synthesis by example checked on
// held-out cases.
//
//	h, _ := host.New(ctx, host.Options{})
//	b, _ := synth.New(synth.Options{Host: h, Writer: cheapModel})
//	defer b.Close(ctx)
//
//	res, err := b.Synthesize(ctx, synth.Task{
//		Goal:     "Turn a title into a URL slug.",
//		Examples: examples, // {Args, Expected} pairs; 40 % are held out
//	})
//	if err == nil && res.Accepted() {
//		reg.Add(res.Tool) // a tool.Tool, sandboxed; also staged for review
//	}
//
// # Languages
//
// A [Backend] turns source into a module. [JavaScript] is the default: the
// model writes function run(args) and every tool is the same engine module
// (synth/jsengine: goja, ES2020+, compiled to WebAssembly), with the
// script in its configuration, so nothing but the engine is needed at run
// time and the engine is compiled to machine code once (about 10 s, then
// read from the host's disk cache). Build the engine with `make
// synth-engine`; without it the JavaScript back-end fails with
// [ErrNoEngine], saying how to build it. [Go] compiles the model's
// func run(args map[string]any) (any, error) with the local go command
// (GOOS=wasip1), offline and standard library only, by the build behind
// `autoagent tools build`.
//
// # Building a tool
//
// [Builder.Build] asks the writer model (a second model call, possibly a
// cheaper provider than the agent's) for name, description, input schema,
// source and self-tests as structured output, then: screens the source
// (size, shape, name, schema, grants), packages it, loads it quarantined,
// checks that it loads, and runs the self-tests in the sandbox. A tool
// failing any step is refused with a [*RejectError] written for the model;
// every step is reported to [Options.Observer] as an [Event].
//
// # create_tool
//
// [Builder.CreateTool] returns the create_tool meta-tool for one run: add
// it to the registry the run's agent uses, and tools it creates are added
// to that registry. It has a per-run creation budget (one instance per
// run: the budget is the instance's), never replaces a tool already in the
// registry, and unloads what it created on Close. Bridge
// [Options.OnUsage] to loop.ReportUsage so tool writing counts against the
// run's token budget.
//
// # Synthesis by example
//
// [Builder.Synthesize] splits the examples with a seed (40 % held out by
// default, at least one shown), shows the writer only the shown ones and,
// after a rejection, only how many held-out cases failed, never which. A
// tool is accepted when it passes its self-tests and every shown and
// held-out example under [JSONEqual]; attempts are bounded, rejected tools
// are unloaded and never written, and the writer's token usage is summed.
//
// # Quarantine and grants
//
// Generated tools get no capabilities. A tool asking for more than
// [Options.Ceiling] (none by default) is refused with a [*GrantError];
// within it, the tool gets what it asked for. [Options.Limits] bound each
// call (the host's 64 MiB, 10 s, 1 MiB by default).
//
// # Staging and promotion
//
// Accepted tools are written to [Options.StagingDir] (plugins/staging) as
// a [Staged] set of files: module, describe sidecar (for JavaScript, it
// carries the script, so the manifest's approval pins it), source and a
// record of how it was made. [Promote] moves one into the plugins
// directory, where it waits for `autoagent tools approve`.
//
// # Code mode
//
// A tool granted tools:NAME (within the ceiling) can call the host tool
// NAME: tools.call(name, args) in JavaScript (the engine's toolbridge
// build, jsengine-tools.wasm), callTool(name, args) in Go. Every such call
// goes through host.Options.CallTool, where the embedding application
// applies the same policy, taint and approval gates as to a model's call.
package synth
