// Command mutate checks that the tests guarding the project's security- and
// contract-critical code can fail: it applies each mutation of its table
// (an exact edit that breaks one check: a branch inverted or deleted),
// runs the tests of the package holding it, and reports whether they
// caught it. Every mutation must be caught; the process exits 1 otherwise.
//
//	go run ./internal/mutate            every mutation
//	go run ./internal/mutate -only drain
//
// A mutation's text must occur exactly once in its file, so an edit of
// the code that moves or rewrites a guarded line makes the table fail
// loudly (update the mutation) instead of silently testing nothing. The
// working tree is restored after each mutation, also on interrupt.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"
)

// mutation is one edit: in file, old is replaced by new; the tests of pkg
// matching run must then fail.
type mutation struct {
	name     string
	file     string
	old, new string
	pkg, run string
}

var mutations = []mutation{
	{"mcp drain: a cancelled request is no longer crossed off", "mcp/drain.go",
		"\t\tcase m.Method == \"notifications/cancelled\":\n\t\t\td.done(idKey(m.Params.RequestID))\n", "",
		"./mcp", "TestDrainCrossesOffCancelledRequests|TestServeIODoesNotWaitForACancelledRequest"},
	{"policy precedence: approve outranks deny", "loop/policyspec.go",
		"\tcase VerdictDeny:\n\t\treturn 3\n", "\tcase VerdictDeny:\n\t\treturn 1\n",
		"./loop", "Polic"},
	{"loop guard: a repeated call is never over the limit", "loop/loopguard.go",
		"return n, n > g.max", "return n, false",
		"./loop", "Repeat|Guard"},
	{"token budget: never reached", "loop/run.go",
		"if r.b.TokenBudget > 0 && r.spent() >= r.b.TokenBudget {", "if false && r.b.TokenBudget > 0 && r.spent() >= r.b.TokenBudget {",
		"./loop", "Budget"},
	{"taint: an untrusted result no longer taints the run", "loop/turn.go",
		"tainted = tainted || o.untrusted", "tainted = tainted && o.untrusted",
		"./loop", "Taint|Trifecta"},
	{"redaction: secrets pass through", "trace/redact.go",
		"\tif !mayHoldSecret(s) {\n\t\treturn s\n\t}\n\tfor _, p := range secretPatterns {", "\tif true {\n\t\treturn s\n\t}\n\tfor _, p := range secretPatterns {",
		"./trace", "Redact"},
	{"SSRF: private and metadata addresses dialled", "host/netpolicy.go",
		"if why := specialAddr(ip); why != \"\" && !p.ipGranted(ip, port) {", "if why := specialAddr(ip); false && why != \"\" && !p.ipGranted(ip, port) {",
		"./host", "Net|SSRF|Private|Redirect"},
	{"SSRF: a zone hides an address from the ranges", "host/netpolicy.go",
		"\tip = ip.WithZone(\"\").Unmap()", "\tip = ip.Unmap()",
		"./host", "TestSpecialAddr"},
	{"SSRF: zoned hosts reach the grants", "host/netpolicy.go",
		"\tif strings.Contains(host, \"%\") {", "\tif strings.Contains(host, \"%%\") {",
		"./host", "TestNetRefusals"},
	{"grants: a zoned literal matches a wildcard name", "manifest/grant.go",
		"\tif strings.Contains(h, \"%\") {", "\tif false {",
		"./manifest", "TestMatchHost"},
	{"safefile: files of /proc and /sys are read", "internal/safefile/safefile.go",
		"\tif name := pseudoFS(f); name != \"\" {", "\tif name := pseudoFS(f); name == \"-\" {",
		"./internal/safefile", "TestReadPseudoFS"},
	{"plugins directory: files that are not WebAssembly are read and hashed whole", "host/plugindir.go",
		"safefile.ReadPrefixed(path, max, wasmHeader)", "safefile.ReadPrefixed(path, max, nil)",
		"./host", "TestSparseNonModulesNotRead"},
	{"grants: fs paths hold direction overrides", "manifest/grant.go",
		"\t\tif strings.IndexFunc(value, invisible) >= 0 {", "\t\tif strings.IndexFunc(value, invisible) < -1 {",
		"./manifest", "TestParseGrant"},
	{"plugins directory: a copied approval takes a name over", "host/plugindir.go",
		"p.Entry.Name == name && p.Entry.File == p.File }", "p.Entry.Name == name }",
		"./host", "TestPluginPrefersItsRecordedFile"},
	{"results hold any number of content items", "host/result.go",
		"\tif len(w.Content) > maxContentItems {", "\tif len(w.Content) < 0 {",
		"./host", "TestResultContentItemsBounded"},
	{"SSRF: the dial takes zoned addresses", "host/netpolicy.go",
		"\t\tif ip.Zone() != \"\" {", "\t\tif false {",
		"./host", "TestDialRefusesZones"},
	{"grants: an import needing a grant loads without it", "host/compile.go",
		"if need := capabilityOf(m, n); need != \"\" && !granted[need] {", "if need := capabilityOf(m, n); need != \"\" && false {",
		"./host", "Hostile|Import|Grant"},
	{"grants: tool_call without its tools: grant", "host/toolcall.go",
		"\tif !granted {\n\t\tinst.deny(", "\tif !granted && false {\n\t\tinst.deny(",
		"./host", "ToolCall"},
	{"fs: a read-only grant writes", "host/fs.go",
		"\tif r.readOnly && flag&writeFlags != 0 {\n\t\treturn nil, experimentalsys.EROFS", "\tif false && flag&writeFlags != 0 {\n\t\treturn nil, experimentalsys.EROFS",
		"./host", "FS"},
	{"fs: guests create symlinks", "host/fs.go",
		"\treturn experimentalsys.EPERM\n}\n\nfunc (r *rootFS) Readlink", "\treturn errno(r.root.Symlink(target, rel(link)))\n}\n\nfunc (r *rootFS) Readlink",
		"./host", "FSWrite|Survival/filesystem"},
	{"fs: FIFOs open", "host/fs.go",
		"\tif m := fi.Mode(); !m.IsRegular() && !m.IsDir() {", "\tif m := fi.Mode(); false && !m.IsRegular() && !m.IsDir() {",
		"./host", "Survival/filesystem"},
	{"manifest verification: changed bytes pass", "manifest/verify.go",
		"\t\t\t\tif c.Approvals[i].SHA256 == c.SHA256 {", "\t\t\t\tif c.Approvals[i].SHA256 != \"\" {",
		"./manifest", "Verify"},
	{"plugins directory: a changed sidecar keeps its approval", "host/plugindir.go",
		"\tif approved && entry.SidecarSHA256 != sidecarSum {\n\t\tapproved = false", "\tif approved && entry.SidecarSHA256 != sidecarSum {\n\t\tapproved = true",
		"./host", "Sidecar"},
	{"plugins directory: a quarantined drop-in squats an approved name", "host/plugindir.go",
		"\t\t\t\tif p.Status != StatusQuarantined {\n\t\t\t\t\treturn false", "\t\t\t\tif true {\n\t\t\t\t\treturn false",
		"./host", "Squat"},
	{"validation: global indices unchecked", "host/internal/wasmbin/code.go",
		"\tif int(i) >= len(f.v.m.Globals) {\n\t\tf.r.invalid(\"global index", "\tif false {\n\t\tf.r.invalid(\"global index",
		"./host", "Survival/fuel"},
	{"verification: loops without a fuel check pass", "host/internal/wasmbin/instrument.go",
		"\tif !ok {\n\t\tfi.fail(f, \"a loop without a fuel check\")", "\tif !ok && false {\n\t\tfi.fail(f, \"a loop without a fuel check\")",
		"./host", "VerifyCatchesEveryDefect"},
	{"rewrite: loops get no fuel check", "host/rewrite.go",
		"\t\t\tout = append(out, w.inst.FuelCheck(w.regionCost(i, loopRegion))...)\n", "",
		"./host", "Interrupt|Survival/infinite|Defective"},
	{"rewrite: bulk instructions are not charged", "host/rewrite.go",
		"\t\t\t\tcase 8, 10, 11:\n\t\t\t\t\tout = append(out, memCharge...)", "\t\t\t\tcase 8, 10, 11:\n\t\t\t\t\t_ = memCharge",
		"./host", "Survival/straight"},
	{"kernel lookups trust a block's length beyond its capacity", "host/kernel.go",
		"if n == blockFree || uint64(n) > c || c < 8 || c&7 != 0 || top-off < c {", "if n == blockFree || c < 8 || c&7 != 0 {",
		"./host", "Kernel"},
	{"error text is not capped", "host/call.go",
		"\tif int64(len(b)) <= max {\n\t\treturn string(b)\n\t}", "\tif true {\n\t\treturn string(b)\n\t}",
		"./host", "Survival/error"},
	{"kv namespaces have no quota", "host/kv.go",
		"\t\t\tif n > quota {\n\t\t\t\treturn errQuota", "\t\t\tif false {\n\t\t\t\treturn errQuota",
		"./host", "Survival/kv"},
	{"call trees nest without end", "host/calltree.go",
		"\tif parent != nil && parent.depth+1 > limits.CallDepth {", "\tif false {",
		"./host", "Survival/re-entry"},
	{"tables grow without a cap", "host/rewrite.go",
		"\t\tif t.HasMax && t.Max < limit {\n\t\t\tlimit = t.Max\n\t\t}\n\t\tout = appendU32(appendU32(append(out, 0x01), t.Min), limit)", "\t\t_ = limit\n\t\tout = appendU32(append(out, 0x00), t.Min)",
		"./host", "Survival/table"},
	{"schemas nest without a bound", "tool/schema.go",
		"\tif d, n := jsonShape(raw); d > MaxSchemaDepth {", "\tif d, n := jsonShape(raw); false && d > MaxSchemaDepth {",
		"./tool", "Bombs"},
	{"schemas hold any number of subschemas", "tool/schema.go",
		"\t} else if n > MaxSchemaObjects {", "\t} else if false && n > MaxSchemaObjects {",
		"./tool", "Bombs"},
	{"schema references may apply a schema to its own value", "tool/schemarefs.go",
		"\tif g.visiting[k] {", "\tif false {",
		"./tool", "RefBombs"},
	{"schema references expand without a bound", "tool/schemarefs.go",
		"\t} else if n > schemaBudget {", "\t} else if n < 0 {",
		"./tool", "RefBombs"},
	{"a write's hole past the end is free", "host/fs.go",
		"\t\t\thole = off - fi.Size()", "\t\t\thole = 0",
		"./host", "Survival/a_terabyte"},
	{"merged data segments fill any number of zeros", "host/rewrite.go",
		"\t\t\tif gap > mergeGap || gap > fill {", "\t\t\tif gap > mergeGap {",
		"./host", "MergeDataBounds"},
	{"functions of any locals times branches", "host/internal/wasmbin/module.go",
		"int64(c.Branches); w > lim.LocalsBranches {", "int64(c.Branches); false && w > lim.LocalsBranches {",
		"./host", "ModuleLimitsRefuseCompileBombs"},
	{"element segments of any total", "host/internal/wasmbin/module.go",
		"m.elementEntries > r.lim.ElementEntries {", "m.elementEntries > 1<<30 {",
		"./host", "ModuleLimitsRefuseCompileBombs"},
	{"types of any total arity", "host/internal/wasmbin/module.go",
		"if values += c; values > lim.TypeValues {", "if values += c; false {",
		"./host", "ModuleLimitsRefuseCompileBombs"},
	{"prepared modules cached without their limits", "host/compile.go",
		"limits[:8], opts.interrupt", "limits[:0], opts.interrupt",
		"./host", "PreparedCacheKeepsToItsLimits"},
	{"describe documents hold any number of subschemas", "host/describe.go",
		"\tif objects > maxDescribeObjects {", "\tif false {",
		"./host", "DescribeSchemaObjects"},
	{"an instance holds any number of files open", "host/fs.go",
		"inst.openFiles.Add(1) > int64(max) {", "inst.openFiles.Add(1) > int64(max)*1000 {",
		"./host", "Survival/open_files"},
	{"fs writes are not counted", "host/fs.go",
		"\tinst.fsWritten += n\n", "",
		"./host", "Survival/a_disk"},
	{"kv entries count no overhead", "host/kv.go",
		"const kvEntryOverhead = 64", "const kvEntryOverhead = 0",
		"./host", "KVQuota"},
	{"a frame's cost leaves out the values it produces", "host/internal/wasmbin/instrument.go",
		"16*int64(locals+maxStack+values)+96", "16*int64(locals+maxStack)+96",
		"./host", "Survival/frames"},
	{"a fuel region costs one unit whatever its length", "host/rewrite.go",
		"\treturn int32(min(cost, 1<<30))\n}", "\treturn 1\n}",
		"./host", "Survival/(a_loop|a_chain)"},
	{"WASI calls do not check the deadline", "host/wasiguard.go",
		"\tinst.checkStop()\n\tif l.list", "\tif l.list",
		"./host", "Survival/WASI_calls"},
	{"WASI lists of any length", "host/wasiguard.go",
		"uint32(params[l.list]) > maxWASIList {", "uint32(params[l.list]) > 1<<30 {",
		"./host", "Survival/one_WASI"},
	{"SIMD sub-opcodes of any encoding", "host/internal/wasmbin/code.go",
		"if n := r.p - pc; (sub < 0x80 && n != 1) || (sub >= 0x80 && n != 2) {", "if n := r.p - pc; false && n > 0 {",
		"./host", "SIMDOpcodeEncodings"},
	{"variables without a count", "host/kernel.go",
		"\tif len(k.vars) >= maxVars {", "\tif false {",
		"./host", "Survival/variables"},
	{"idle pools without a memory budget", "host/pool.go",
		"\t\tif cur+n > h.poolMemory {", "\t\tif false {",
		"./host", "PoolMemory"},
	{"safefile reads FIFOs", "internal/safefile/safefile.go",
		"\tif !fi.Mode().IsRegular() {\n\t\tf.Close()", "\tif false {\n\t\tf.Close()",
		"./internal/safefile", "."},
	{"grant coverage is lexical again", "manifest/grant.go",
		"\t\tgp, op := resolvedGrantPath(g.Path), resolvedGrantPath(other.Path)", "\t\tgp, op := filepath.Clean(g.Path), filepath.Clean(other.Path)",
		"./manifest", "PlantedLink"},
	{"guest memory faulted in by the guest", "host/memory.go",
		"\tm.prefault(old)\n", "\t_ = old\n",
		"./host", "TestGuestMemoryIsFaultedInByTheHost"},
	{"chat --session no longer reads the stored conversation", "cmd/autoagent/chat.go",
		"\t\t\t\tif store != nil {\n\t\t\t\t\tif history, err = stored(); err != nil {", "\t\t\t\tif false {\n\t\t\t\t\tif history, err = stored(); err != nil {",
		"./cmd/autoagent", "TestChatSession"},
	{"session append loses the seq counter", "session/sqlite.go",
		"next+int64(len(msgs)), stamp(now), k.User, k.Session)", "next, stamp(now), k.User, k.Session)",
		"./session", "TestConformance|TestTwoProcesses"},
	{"session prune ignores KeepLast", "session/sqlite.go",
		"\tif opts.KeepLast > 0 {\n\t\t\tres, err", "\tif false {\n\t\t\tres, err",
		"./session", "TestConformance"},
	{"code mode not wired: the host has no gate", "sandbox.go",
		"CallTool: loop.CallNested}", "CallTool: nil}",
		".", "TestCodeMode"},
	{"CallNested skips the guards and the policy", "loop/nested.go",
		"\tpend, _ := r.screenLocked(step, span, p, tainted, nil)\n", "\tvar pend *PendingCall\n\t_ = tainted\n",
		"./loop", "CallNested"},
	{"CallNested drops taint", "loop/nested.go",
		"\tif raw.untrusted {\n\t\tcc.tainted.Store(true)\n\t}\n", "",
		"./loop", "CallNested"},
	{"Runtime.Close leaves the session store open", "runtime.go",
		"\t\t\terrs = append(errs, rt.sessions.Close())", "\t\t\t_ = rt.sessions",
		".", "TestRuntimeCloseLeaves"},
	{"Runtime.Close leaves the plugins watcher running", "runtime.go",
		"\t\tif rt.stopWatch != nil {\n\t\t\trt.stopWatch()", "\t\tif false && rt.stopWatch != nil {\n\t\t\trt.stopWatch()",
		".", "TestRuntimeCloseLeaves"},
	{"Runtime.Continue stores nothing", "runtime.go",
		"\t\tif _, err := rt.sessions.Append(ctx, k, res.Messages[len(history):]...); err != nil {", "\t\tif _, err := rt.sessions.Append(ctx, k); err != nil {",
		".", "TestRuntimeContinue"},
	{"agent files accept unknown keys", "agentfile.go",
		"\tdec.KnownFields(true)\n", "",
		".", "TestLoadAgentFile"},
	{"a flag no longer overrides the agent file", "cmd/autoagent/agentflags.go",
		"\t\tapply(&cfg, &flags)\n", "\t\t_ = apply\n",
		"./cmd/autoagent", "TestRunAgentFile"},
	{"calls past Bounds.MaxToolCalls run", "loop/turn.go",
		"if m := r.b.MaxToolCalls; m > 0 && r.st.ToolCalls+counted >= m {", "if m := r.b.MaxToolCalls; false && m > 0 && r.st.ToolCalls+counted >= m {",
		"./loop", "TestMaxToolCalls"},
	{"a tool's own time limit is ignored", "loop/turn.go",
		"\tif p.flags.Timeout > 0 {\n\t\treturn p.flags.Timeout", "\tif false {\n\t\treturn p.flags.Timeout",
		"./loop", "TestToolTimeout"},
	{"plugins directory: a reload trusts a remembered sum whatever the file became", "host/plugindir.go",
		"if prev, ok := sums[file]; keyed && ok && prev.key == fkey {", "if prev, ok := sums[file]; keyed && ok {",
		"./host", "TestReloadReadsOnlyChangedFiles"},
	{"plugins directory: sums of files changed a moment ago are remembered", "host/plugindir.go",
		"if keyed && time.Since(time.Unix(0, fkey.ctime)) > racyWindow {", "if keyed {",
		"./host", "TestReloadReadsOnlyChangedFiles"},
	{"calls start early past the pre-tool hooks", "loop/early.go",
		"\tif len(r.a.PreToolHooks) > 0 {\n\t\treturn\n\t}\n", "",
		"./loop", "TestToolHooksNoEarlyStart"},
	{"rewritten arguments are not validated", "loop/hooks.go",
		"\t\t\tif err := validateArguments(p, d.Arguments); err != nil {", "\t\t\tif err := validateArguments(p, d.Arguments); false && err != nil {",
		"./loop", "TestToolHooks"},
	{"a failing pre-tool hook lets the call through", "loop/hooks.go",
		"\t\tcase err != nil:\n\t\t\tev.Status, ev.Error = \"error\", err.Error()\n\t\t\tr.traceEvent(trace.ToolHook, llmSpan, ev)\n\t\t\tp.refusal", "\t\tcase false:\n\t\t\tev.Status, ev.Error = \"error\", err.Error()\n\t\t\tr.traceEvent(trace.ToolHook, llmSpan, ev)\n\t\t\tp.refusal",
		"./loop", "TestToolHooks"},
	{"a failing guardrail allows", "loop/guardrail.go",
		"\t\tif err != nil {\n\t\t\tv = GuardVerdict{Action: GuardBlock,", "\t\tif err != nil {\n\t\t\tv = GuardVerdict{Action: GuardAllow,",
		"./loop", "TestGuardrailsInARun"},
	{"cards pass without the Luhn check", "loop/guardrail_builtin.go",
		"\t\tif !luhn(m) {\n", "\t\tif false {\n",
		"./loop", "TestPIIGuardrail"},
	{"the prompt is not guarded", "loop/run.go",
		"\tif !resumed && len(r.guardrails(GuardInput)) > 0 {", "\tif false && !resumed && len(r.guardrails(GuardInput)) > 0 {",
		"./loop", "TestGuardrailsInARun"},
	{"tool results are not guarded", "loop/turn.go",
		"\tif gs := r.guardrails(GuardToolResult); len(gs) > 0 {", "\tif gs := r.guardrails(GuardToolResult); false && len(gs) > 0 {",
		"./loop", "TestGuardrailsInARun"},
	{"a policy file's guardrails are ignored", "loop/guardrail.go",
		"\tspec, ok := r.a.Policy.(*PolicySpec)\n\tif !ok || len(spec.guardrailsFor(stage)) == 0 {", "\tspec, ok := r.a.Policy.(*PolicySpec)\n\tif true || !ok || len(spec.guardrailsFor(stage)) == 0 {",
		"./loop", "TestPolicyGuardrails"},
	{"tool search: tools not found yet may be called", "loop/turn.go",
		"if r.search != nil && !r.search.isRevealed(c.Name) {\n\t\t\tp.refusal = notOfferedMessage", "if false && r.search != nil && !r.search.isRevealed(c.Name) {\n\t\t\tp.refusal = notOfferedMessage",
		"./loop", "TestToolSearch"},
	{"tool search: found tools are not kept in the state", "loop/turn.go",
		"\t\tr.st.Revealed = r.search.names()\n", "",
		"./loop", "TestToolSearch"},
	{"the context budget never triggers", "loop/contextbudget.go",
		"\tif window == 0 || float64(r.lastInput) < r.b.ContextShare*float64(window) {", "\tif true || window == 0 || float64(r.lastInput) < r.b.ContextShare*float64(window) {",
		"./loop", "TestContextBudget"},
	{"plugins directory: a copied approval knocks the tool out again", "host/plugindir.go",
		"\t\tif slices.ContainsFunc(offs, func(o offer) bool { return inRecordedFile(&s.Plugins[o.plugin]) }) {", "\t\tif false {",
		"./host", "TestCopiedApprovalDoesNotKnockTheToolOut"},
	{"orchestrator: an answer for a step that is not open reaches the flow", "orchestrator/orchestrator.go",
		"\t\t\tcase !open:\n", "\t\t\tcase false && !open:\n",
		"./orchestrator", "TestOrchestratorGuidedForm"},
	{"structured output: the answer is not validated", "loop/run.go",
		"\t\t\tif r.outSchema != nil {\n\t\t\t\tv, err := checkStructured(r.outSchema, answer)", "\t\t\tif false && r.outSchema != nil {\n\t\t\t\tv, err := checkStructured(r.outSchema, answer)",
		"./loop", "TestStructuredOutput"},
	{"anthropic: the answer tool's call stays a tool call", "providers/anthropic/provider.go",
		"\t\treturn foldResponse(resp, answer), err", "\t\t_ = answer\n\t\treturn resp, err",
		"./providers/anthropic", "TestReplayObjectGeneration"},
	{"clock: the ungranted clock is as fine as the granted one", "host/instance.go",
		"\treturn time.Millisecond\n}\n\n// realClocks", "\treturn time.Microsecond\n}\n\n// realClocks",
		"./host", "TestRealClockResolution"},
	{"random: one read of any size", "host/instance.go",
		"\treturn rand.Read(p[:min(len(p), randomChunk)])", "\treturn rand.Read(p)",
		"./host", "TestReadRandomIsCut"},
	{"clock and random: the deterministic mode is ignored", "host/instance.go",
		"\tif l.h.opts.Deterministic {", "\tif false {",
		"./host", "TestClockAndRandomness"},
	{"approve: every grant counts as implied", "host/inspect.go",
		"\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}", "\t\t\treturn true\n\t\t}\n\t}\n\treturn true\n}",
		"./cmd/autoagent", "TestApproveClockAndRandomImplied"},
	{"approve: clock and random are not requested by the WASI imports", "host/inspect.go",
		"\t\tif ins.Implies(g) && !slices.ContainsFunc(", "\t\tif false && !slices.ContainsFunc(",
		"./cmd/autoagent", "TestApproveClockAndRandomImplied"},
	{"extism: proc_exit(0) after output is a crash", "host/call.go",
		"\t\tres, callErr, exited = uint64(exit.ExitCode()), nil, true", "\t\texited = true",
		"./host", "TestExitZeroAfterOutputIsSuccess"},
	{"extism: an error set with a return of 0 succeeds", "host/call.go",
		"\tif len(errMsg) > 0 {\n\t\treturn nil, capText(errMsg, inst.limits.ErrorText), nil\n\t}\n\tif err != nil {", "\tif err != nil {",
		"./host", "TestCallOutcomes|TestExtismCompatibilityFailures"},
	{"eval: a failure's timeline may grow into the next one's", "eval/runk.go",
		"\t\t\tf.Timeline = steps[start:len(steps):len(steps)]", "\t\t\tf.Timeline = steps[start:]",
		"./eval", "TestFailureTimelinesAreApart"},
	{"config grants: ignored at load", "host/module.go",
		"\t\t\tif v, ok := g.ConfigValue(l.h.opts.LookupEnv); ok {\n\t\t\t\tl.config[g.Name] = v", "\t\t\tif v, ok := g.ConfigValue(l.h.opts.LookupEnv); false && ok {\n\t\t\t\tl.config[g.Name] = v",
		"./host", "TestConfigGrant"},
	{"config grants: $VAR taken literally", "manifest/grant.go",
		"\tif name, ref := strings.CutPrefix(g.Value, \"$\"); ref {", "\tif name, ref := strings.CutPrefix(g.Value, \"$\"); false && ref {",
		"./manifest", "TestConfigValue"},
	{"eval: pass^j draws with replacement", "eval/runk.go",
		"\t\tp *= float64(c-i) / float64(n-i)", "\t\tp *= float64(c) / float64(n)",
		"./eval", "TestRunKStatistics"},
	{"eval: failed runs' tokens are not paid", "eval/runk.go",
		"\t\t\ttokens += run.Tokens\n", "\t\t\tif run.Pass {\n\t\t\t\ttokens += run.Tokens\n\t\t\t}\n",
		"./eval", "TestRunKStatistics"},
	{"eval: unknown usage counts as zero", "eval/runk.go",
		"\t\tif !run.UsageKnown {\n\t\t\tcr.known, cr.budgetPassed = false, false", "\t\tif false {\n\t\t\tcr.known, cr.budgetPassed = false, false",
		"./eval", "TestRunKUnknownUsage"},
	{"eval: a case's scripts are ignored", "cmd/autoagent/eval.go",
		"\t\tif scriptedRun && len(c.Scripts) > 0 {", "\t\tif false {",
		"./cmd/autoagent", "TestEvalExampleSuite"},
	{"trace summarize: successes are not counted", "trace/summary.go",
		"\t\tif p.Status == \"ok\" {\n\t\t\ts.Successes++", "\t\tif false {\n\t\t\ts.Successes++",
		"./trace", "TestSummarize"},
	{"host functions: imported without their grant", "host/compile.go",
		"\t\t\tif g := fn.Grant().String(); !granted[g] {", "\t\t\tif g := fn.Grant().String(); false && !granted[g] {",
		"./host", "TestHostFunctionImports"},
	{"host functions: callable under describe", "host/function.go",
		"\tif inst.describing {\n\t\tinst.deny(&DeniedError{Kind: \"host\", Action: action, Reason: noCapabilities})", "\tif false {\n\t\tinst.deny(&DeniedError{Kind: \"host\", Action: action, Reason: noCapabilities})",
		"./host", "TestInspectHostFunctions"},
	{"host functions: a returned error is ignored", "host/function.go",
		"\t\tinst.fail(&FunctionError{Function: g.Name, Err: err})", "\t\t_ = err",
		"./host", "TestHostFunctionFailures"},
	{"host functions: the call's deadline does not reach them", "host/function.go",
		"\treturn f.Func(inst.ctx, c, stack)", "\treturn f.Func(context.Background(), c, stack)",
		"./host", "TestHostFunctionFailures/deadline"},
	{"host functions: an undeclared one is trusted", "host/flags.go",
		"\t\t\tif !fn.Trusted {\n\t\t\t\tf.Untrusted = true", "\t\t\tif false {\n\t\t\t\tf.Untrusted = true",
		"./host", "TestHostFunctions"},
	{"host functions: approval needs --force", "host/inspect.go",
		"\t\treturn slices.Contains(ins.HostFunctions, g.Name)", "\t\treturn false",
		"./host", "TestInspectHostFunctions"},
	{"host grants: the kernel's namespace may be named", "manifest/grant.go",
		"\tif slices.Contains(reservedNamespaces, namespace) {", "\tif slices.Contains(reservedNamespaces, namespace) && false {",
		"./manifest", "TestParseGrantInvalid"},
	{"export tools: the input is the arguments' JSON", "host/call.go",
		"\tif json.Unmarshal(args, &a) == nil && a.Input != nil {", "\tif false {",
		"./host", "TestExtismPlugins"},
	{"export tools: non-UTF-8 output passed on", "host/call.go",
		"\tif !utf8.Valid(out) {", "\tif false {",
		"./host", "TestExportTool"},
	{"fs guest paths: mounted at the host path", "host/module.go",
		"\t\t\tif g.Guest != \"\" {\n\t\t\t\tat = g.Guest", "\t\t\tif false {\n\t\t\t\tat = g.Guest",
		"./host", "TestExtismPlugins/fs"},
	{"exits: a guest's exit(-1) taken for a cancellation", "host/call.go",
		"\t\tif ctx.Err() != nil {\n\t\t\treturn 0, false", "\t\tif true {\n\t\t\treturn 0, false",
		"./host", "TestExtismPlugins/exit"},
	{"hyper-mcp v2: call_tool gets v1's document", "host/call.go",
		"\tif l.entry.v2 {\n\t\tn, _ := json.Marshal(name)", "\tif false {\n\t\tn, _ := json.Marshal(name)",
		"./host", "TestHyperMCPPlugins"},
	{"list changed: a module that says so is not stateful", "host/compile.go",
		"\t\tif statefulImports[m+\".\"+n] {", "\t\tif false {",
		"./host", "TestToolListChanged"},
	{"list changed: the tools are not read again", "host/call.go",
		"\tif err == nil && inst.listChanged {", "\tif false {",
		"./host", "TestToolListChanged"},
	{"list changed: the Dir does not reload", "host/watch.go",
		"\t\t\tcase <-d.listChanged:\n\t\t\t\t// A module said its tools changed: the reload reads them.\n\t\t\t\tschedule()", "\t\t\tcase <-d.listChanged:",
		"./host", "TestToolListChangedInDir"},
	{"mcp resources: a withdrawn one stays listed", "mcp/catalog.go",
		"\tif len(gone) > 0 {\n\t\ts.srv.RemoveResources(gone...)\n\t}", "",
		"./mcp", "TestServerPromptsAndResources"},
	{"mcp content: an embedded blob's bytes are dropped", "mcp/content.go",
		"\t\t\t\tif r.Blob != nil {\n\t\t\t\t\titem.Data = base64.StdEncoding.EncodeToString(r.Blob)", "\t\t\t\tif false {\n\t\t\t\t\titem.Data = base64.StdEncoding.EncodeToString(r.Blob)",
		"./mcp", "TestContentRoundTrip"},
	{"net:* reaches private addresses", "manifest/grant.go",
		"\t\t\treturn !other.IsIPLiteral()", "\t\t\treturn true",
		"./manifest", "TestCoversAnyHost"},
	{"skip_tools: a skipped tool is exposed", "host/plugindir.go",
		"\t\t\tif p.Entry != nil && p.Entry.Skips(name) {", "\t\t\tif false {",
		"./cmd/autoagent", "TestApproveSkipTools"},
	{"mcp tasks: a cancelled call leaves the task running", "mcp/tasks.go",
		"\t\t\t_ = ts.call(cctx, \"tasks/cancel\", map[string]string{\"taskId\": st.TaskID}, nil)", "\t\t\t_, _ = ts, cctx",
		"./mcp", "TestReferenceServerTasks"},
	{"mcp tasks over HTTP: the SDK's tools/list answers are not seen", "mcp/tasks_http.go",
		"\tif !ok || req.Method != \"tools/list\" || !req.ID.IsValid() {", "\tif true || !ok {",
		"./mcp", "TestReferenceServerTasks/streamable-http"},
	{"mcp tasks over HTTP: task requests outside the session", "mcp/tasks_http.go",
		"\t\thr.Header.Set(\"Mcp-Session-Id\", id)", "\t\t_ = id",
		"./mcp", "TestReferenceServerTasks/streamable-http"},
	{"mcp tasks over HTTP: an event stream's answer is not read", "mcp/tasks_http.go",
		"\t\t\t\tif !yield(decodeHTTPMessage([]byte(ev.Data))) {", "\t\t\t\tif true {",
		"./mcp", "TestReferenceServerTasks/streamable-http"},
	{"mcp tasks over HTTP: a tool is mounted before its taskSupport is read", "mcp/remote.go",
		"\tif err := c.tasks.settle(rctx); err != nil {", "\tif err := error(nil); err != nil {",
		"./mcp", "TestTasksOverHTTPWithJSONAnswers"},
	{"mcp tasks over HTTP: a JSON answer is not read", "mcp/tasks_http.go",
		"\t\t\tyield(decodeHTTPMessage(data))", "\t\t\tyield(nil, io.ErrUnexpectedEOF)",
		"./mcp", "TestTasksOverHTTPWithJSONAnswers"},
	{"durable: a tool that is not idempotent is retried", "durable/workflow.go",
		"\tattempts := int32(1)\n", "\tattempts := int32(3)\n",
		"./durable", "TestWorkflowLostWorker"},
	{"durable: a lost call is not reported OutcomeUnknown", "durable/workflow.go",
		"\t\tcase errors.As(err, &terr) && !t.info.Flags.Idempotent:", "\t\tcase false:",
		"./durable", "TestWorkflowLostWorker"},
	{"durable: decisions are not validated", "durable/workflow.go",
		"workflow.UpdateHandlerOptions{Validator: r.validate}", "workflow.UpdateHandlerOptions{}",
		"./durable", "TestWorkflowApproval"},
	{"durable: the run is not named after the workflow", "durable/workflow.go",
		"\t\tNewRunID: func() string { return r.status.RunID },\n", "",
		"./durable", "TestWorkflowMatchesLocalRun"},
	{"durable: a tool's taint is dropped", "durable/workflow.go",
		"\tif out.Report.Tainted {", "\tif false {",
		"./durable", "TestWorkflowCarriesTaintAndUsage"},
	{"durable: a tool's usage is dropped", "durable/workflow.go",
		"\tif out.Report.HaveUsage {", "\tif false {",
		"./durable", "TestWorkflowCarriesTaintAndUsage"},
	{"durable: a provider's final error is retried", "durable/activities.go",
		"\tif llm.IsRetryable(err) || ctx.Err() != nil {", "\tif true {",
		"./durable", "TestWorkflowModelErrors"},
	{"durable: a long history never continues as new", "durable/workflow.go",
		"\t\t\treturn errContinue", "\t\t\treturn nil",
		"./durable", "TestWorkflowContinueAsNew"},
	{"durable: decisions are applied again", "durable/workflow.go",
		"\tr.decisions = nil\n\tr.status.State, r.status.Pending = \"running\", nil", "\tr.status.State, r.status.Pending = \"running\", nil",
		"./durable", "TestWorkflowApproval"},
	{"durable: a cancelled activity does not end the loop's context", "durable/workflow.go",
		"\t\tctx.Value(wfKey{}).(*wfValue).cancel()\n", "",
		"./durable", "TestDevServerCancelCancelsTool"},
	{"durable: a Go policy is not asked", "durable/workflow.go",
		"\t\ta.Policy = loop.PolicyFunc(policyStandIn)", "\t\t_ = policyStandIn",
		"./durable", "TestWorkflowGoPolicy"},
	{"durable: a policy file is not applied", "durable/workflow.go",
		"\t\ta.Policy = p\n", "\t\t_ = p\n",
		"./durable", "TestWorkflowApproval"},
	{"durable: the workflow schedules another command (determinism)", "durable/workflow.go",
		"\tif err := workflow.ExecuteActivity(actx, ActivityDescribe).Get(ctx, &desc); err != nil {", "\t_ = workflow.Sleep(ctx, time.Millisecond)\n\tif err := workflow.ExecuteActivity(actx, ActivityDescribe).Get(ctx, &desc); err != nil {",
		"./durable", "TestRecordedHistoriesReplay"},
	{"mcp tasks: a required task is called directly", "mcp/remote.go",
		"\tif c.tasks.requires(t.remote) {", "\tif false {",
		"./mcp", "TestReferenceServerTasks"},
}

func main() {
	only := flag.String("only", "", "run only the mutations whose name contains this")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on one mutation's test run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	missed := 0
	ran := 0
	for _, m := range mutations {
		if *only != "" && !strings.Contains(m.name, *only) {
			continue
		}
		ran++
		caught, detail, err := apply(ctx, m, *timeout)
		switch {
		case err != nil:
			fmt.Printf("ERROR   %s: %v\n", m.name, err)
			missed++
		case caught:
			fmt.Printf("caught  %s (%s)\n", m.name, detail)
		default:
			fmt.Printf("MISSED  %s: the tests of %s matching %q pass with it\n", m.name, m.pkg, m.run)
			missed++
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Printf("%d mutations, %d caught\n", ran, ran-missed)
	if missed > 0 {
		os.Exit(1)
	}
}

// apply makes the mutation, runs its tests and restores the file.
func apply(ctx context.Context, m mutation, timeout time.Duration) (caught bool, detail string, err error) {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return false, "", err
	}
	if n := bytes.Count(orig, []byte(m.old)); n != 1 {
		return false, "", fmt.Errorf("%s holds the mutated text %d times, want once: update the mutation", m.file, n)
	}
	mutated := bytes.Replace(orig, []byte(m.old), []byte(m.new), 1)
	if err := os.WriteFile(m.file, mutated, 0o644); err != nil {
		return false, "", err
	}
	defer os.WriteFile(m.file, orig, 0o644)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "go", "test", "-count=1", "-run", m.run, m.pkg)
	out, err := cmd.CombinedOutput()
	if tctx.Err() != nil {
		return true, "the tests hung past " + timeout.String(), nil
	}
	if err == nil {
		return false, "", nil
	}
	if bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")) {
		return false, "", fmt.Errorf("the mutation does not build:\n%s", out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--- FAIL:") {
			return true, strings.TrimSpace(line), nil
		}
	}
	return true, "the tests failed", nil
}
