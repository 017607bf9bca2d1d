package host

import (
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// flagsFor derives a tool's flags from what its module was granted and
// from its author's annotations. Grants are the truth (a module can only
// reach the outside through them), so annotations may add a flag but never
// remove one a grant implies:
//
//   - Egress: the module holds a net: grant (the host's HTTP function is
//     its only way to send data out).
//   - Untrusted: the module holds a net: or fs grant (its
//     results can carry content written by others), or the author set
//     openWorldHint: true.
//   - Idempotent: the module holds no grant with effects outside the call
//     (net, fs.write, fs.workspace, kv, tools): calling it again changes nothing outside
//     it (its answer may still read the clock or draw randomness). The
//     author's idempotentHint or readOnlyHint cannot make a module with
//     such a grant idempotent: a policy on idempotent, a resume that runs
//     a call again, and an early start trust the flag.
//   - A host: grant sets the flags its [Function] does not disclaim: Egress
//     unless it is Local, Untrusted unless it is Trusted, effects unless
//     it is Idempotent. A grant of a function fs lacks counts as all three
//     (the module is refused at load anyway).
//   - Permissions: the grant strings, plus "network", "filesystem.read",
//     "filesystem.write" labels that policies written for the Python
//     library match on.
func flagsFor(grants []manifest.Grant, a *Annotations, fs functions) tool.Flags {
	var f tool.Flags
	effects := false
	labels := map[string]bool{}
	for _, g := range grants {
		f.Permissions = append(f.Permissions, g.String())
		switch g.Kind {
		case manifest.KindNet:
			f.Egress, f.Untrusted, effects = true, true, true
			labels["network"] = true
		case manifest.KindFSRead:
			f.Untrusted = true
			labels["filesystem.read"] = true
		case manifest.KindFSWrite, manifest.KindFSWorkspace:
			f.Untrusted, effects = true, true
			labels["filesystem.read"] = true
			labels["filesystem.write"] = true
		case manifest.KindKV, manifest.KindTools:
			effects = true
		case manifest.KindHost:
			fn := fs.lookup(g.HostFunction())
			if fn == nil {
				fn = &Function{}
			}
			if !fn.Local {
				f.Egress = true
			}
			if !fn.Trusted {
				f.Untrusted = true
			}
			if !fn.Idempotent {
				effects = true
			}
		}
	}
	for _, l := range []string{"network", "filesystem.read", "filesystem.write"} {
		if labels[l] {
			f.Permissions = append(f.Permissions, l)
		}
	}
	f.Idempotent = !effects
	if a != nil {
		if isTrue(a.OpenWorldHint) {
			f.Untrusted = true
		}
	}
	return f
}

// grantedAnnotations returns a tool's annotations as its grants allow
// them (its flags from flagsFor): a module with effects is neither
// read-only nor idempotent, nor non-destructive, whatever it says; one
// whose results come from outside, or that can send data out, reaches an
// open world. A hint the grants do not contradict is kept, and an absent
// one stays absent (MCP reads absence as the cautious value).
func grantedAnnotations(a *Annotations, f tool.Flags) *Annotations {
	if a == nil {
		return nil
	}
	c := *a
	if !f.Idempotent {
		if isTrue(c.ReadOnlyHint) {
			c.ReadOnlyHint = boolPtr(false)
		}
		if isTrue(c.IdempotentHint) {
			c.IdempotentHint = boolPtr(false)
		}
		if isFalse(c.DestructiveHint) {
			c.DestructiveHint = boolPtr(true)
		}
	}
	if (f.Untrusted || f.Egress) && isFalse(c.OpenWorldHint) {
		c.OpenWorldHint = boolPtr(true)
	}
	return &c
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }

func boolPtr(b bool) *bool { return &b }
