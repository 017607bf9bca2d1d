package policy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
)

// pathTree builds, in a temporary directory:
//
//	base/              the directory writes must stay in
//	base/file
//	base/inlink     -> ../outside    (inside, pointing out)
//	base/deep       -> <abs>/outside/sub
//	base/dangling   -> ../outside/new (a target that does not exist)
//	base/danglingin -> new           (a target inside that does not exist)
//	base/loop1      -> loop2, base/loop2 -> loop1
//	base/self       -> self
//	outside/secret, outside/sub/
//	outlink         -> base          (outside, pointing in)
func pathTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"base", "outside/sub"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"base/file", "outside/secret"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"base/inlink":     "../outside",
		"base/deep":       filepath.Join(root, "outside/sub"),
		"base/dangling":   "../outside/new",
		"base/danglingin": "new",
		"base/loop1":      "loop2",
		"base/loop2":      "loop1",
		"base/self":       "self",
		"base/rootlink":   "/",
		"base/chain1":     "chain2",
		"base/chain2":     "../outlink/../outside",
		"outlink":         "base",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return root
}

// decide asks a policy that denies writes outside dirs about path.
func decide(t *testing.T, path string, dirs ...string) loop.Decision {
	t.Helper()
	d, _ := json.Marshal(dirs)
	p, err := policy.Parse([]byte(`{"rules":[{"tool":"write_file","action":"deny","when":{"args":{"path":{"not":{"path_within":` + string(d) + `}}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": path})
	dec, err := p.Decide(context.Background(), &loop.PolicyInput{Call: llm.ToolCall{Name: "write_file", Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

func TestPathWithinFollowsLinks(t *testing.T) {
	root := pathTree(t)
	base := filepath.Join(root, "base")
	for _, c := range []struct {
		name, path string
		allow      bool
	}{
		{"a file inside", "base/file", true},
		{"a new file inside", "base/new.txt", true},
		{"a new directory inside", "base/a/b/c.txt", true},
		{"a link inside pointing out", "base/inlink/secret", false},
		{"the link itself", "base/inlink", false},
		{"an absolute link inside pointing out", "base/deep/x", false},
		{"dot-dot after a link", "base/deep/../secret", false},
		{"dot-dot after a link, back in", "base/inlink/../base/file", true},
		{"a link outside pointing in", "outlink/file", true},
		{"a dangling link pointing out", "base/dangling", false},
		{"a dangling link pointing in", "base/danglingin", true},
		{"a missing directory, dot-dot, then a link out", "base/missing/../inlink/secret", false},
		{"lexical traversal", "base/../outside/secret", false},
		{"a prefix that is not a parent", "base2/x", false},
		// Our own attacks on the resolution.
		{"doubled and trailing slashes", "base//inlink///secret/", false},
		{"a link to the root", "base/rootlink" + root + "/outside/secret", false},
		{"a chain of links out", "base/chain1/secret", false},
		{"dot segments", "base/./a/./../file", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := decide(t, root+"/"+c.path, base) // not filepath.Join: it would clean the ".."
			if got := d.Verdict == loop.VerdictAllow; got != c.allow {
				t.Errorf("%s: %+v, want allowed %v", c.path, d, c.allow)
			}
		})
	}
}

// The kernel's own links are followed too: /proc/self/root leads to /.
func TestPathWithinFollowsProcLinks(t *testing.T) {
	root := pathTree(t)
	if _, err := os.Lstat("/proc/self/root"); err != nil {
		t.Skip("no /proc/self/root here")
	}
	base := filepath.Join(root, "base")
	if d := decide(t, "/proc/self/root"+root+"/base/file", base); d.Verdict != loop.VerdictAllow {
		t.Errorf("through /proc/self/root, inside: %+v", d)
	}
	if d := decide(t, "/proc/self/root"+root+"/base/inlink/secret", base); d.Verdict != loop.VerdictDeny {
		t.Errorf("through /proc/self/root, out: %+v", d)
	}
}

// A path that cannot be resolved safely is refused with a reason naming
// it, whatever the rules say; so is a loop in a policy's directory.
func TestPathWithinRefusesWhatCannotBeResolved(t *testing.T) {
	root := pathTree(t)
	base := filepath.Join(root, "base")
	for _, p := range []string{"base/loop1/x", "base/self", "base/loop2"} {
		d := decide(t, filepath.Join(root, p), base)
		if d.Verdict != loop.VerdictDeny || !strings.Contains(d.Reason, filepath.Join(root, p)) || !strings.Contains(d.Reason, "symbolic links (a loop?)") {
			t.Errorf("%s: %+v", p, d)
		}
	}
	// The refusal stands under a rule that would allow the path, too.
	p, err := policy.Parse([]byte(`{"default":"deny","rules":[{"tool":"*","action":"allow","when":{"args":{"path":{"path_within":"/"}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(root, "base/self/x")})
	if d, _ := p.Decide(context.Background(), &loop.PolicyInput{Call: llm.ToolCall{Name: "w", Arguments: args}}); d.Verdict != loop.VerdictDeny || !strings.Contains(d.Reason, "cannot be resolved safely") {
		t.Errorf("allow rule: %+v", d)
	}
	if d := decide(t, filepath.Join(root, "base/file"), filepath.Join(root, "base/loop1")); d.Verdict != loop.VerdictDeny || !strings.Contains(d.Reason, "the directory") {
		t.Errorf("a loop in the policy's directory: %+v", d)
	}
	if d := decide(t, "a\x00b", base); d.Verdict != loop.VerdictDeny || !strings.Contains(d.Reason, "NUL") {
		t.Errorf("NUL: %+v", d)
	}
}

// The policy's directory is resolved too, and a relative path is taken
// from the working directory.
func TestPathWithinResolvesTheDirectoryAndRelativePaths(t *testing.T) {
	root := pathTree(t)
	if d := decide(t, filepath.Join(root, "base/file"), filepath.Join(root, "outlink")); d.Verdict != loop.VerdictAllow {
		t.Errorf("a directory given through a link: %+v", d)
	}
	if d := decide(t, filepath.Join(root, "outside/secret"), filepath.Join(root, "base/inlink")); d.Verdict != loop.VerdictAllow {
		t.Errorf("a directory that is a link out: %+v", d)
	}
	t.Chdir(root)
	for path, allow := range map[string]bool{"base/file": true, "./base/x": true, "base/inlink/secret": false, "outside/secret": false} {
		if d := decide(t, path, "base"); (d.Verdict == loop.VerdictAllow) != allow {
			t.Errorf("relative %s: %+v, want allowed %v", path, d, allow)
		}
	}
}
