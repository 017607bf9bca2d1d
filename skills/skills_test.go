package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/autoagent-go/autoagent/skills"
	"github.com/autoagent-go/autoagent/tool"
)

const pdfSkill = "---\nname: pdf\ndescription: Fill PDF forms. Use when the user gives a PDF form.\nlicense: MIT\n---\n# Filling forms\n\nRead reference.md first.\n"

// put writes files (relative path → content) under dir.
func put(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call calls the set's tool named name with args, in a context carrying
// scope, and returns its text and whether it failed.
func call(t *testing.T, set *skills.Set, scope tool.TaintScope, name, args string) (string, bool) {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Spec().Name != name {
			continue
		}
		ctx := context.Background()
		if scope != nil {
			ctx = tool.WithTaintScope(ctx, scope)
		}
		res, err := tl.Call(ctx, tool.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: Go error %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.Text)
		}
		return b.String(), res.IsError
	}
	t.Fatalf("no tool %s", name)
	return "", false
}

type scope struct{ tainted bool }

func (s *scope) Tainted() bool { return s.tainted }
func (s *scope) Taint()        { s.tainted = true }

func TestOpenAndDisclose(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"pdf/SKILL.md":        pdfSkill,
		"pdf/reference.md":    "Field names are case-sensitive.",
		"pdf/scripts/fill.py": "print('never run')",
		"notes/README.md":     "not a skill: no SKILL.md",
		"review/SKILL.md":     "---\r\nname: review\r\ndescription: >\r\n  Review code\r\n  carefully.\r\n---\r\nCheck the tests.",
		"review/tools/x.wasm": "\x00asm",
	})
	set, err := skills.Open([]skills.Source{{Dir: dir, Trusted: true}}, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Skills()
	if len(got) != 2 || got[0].Name != "pdf" || got[1].Name != "review" {
		t.Fatalf("skills = %+v", got)
	}
	if got[1].Description != "Review code carefully." || got[1].Body != "Check the tests." {
		t.Errorf("CRLF and folded description: %+v", got[1])
	}
	if got[0].ToolsDir != "" || got[1].ToolsDir != filepath.Join(dir, "review", "tools") {
		t.Errorf("tools dirs %q, %q", got[0].ToolsDir, got[1].ToolsDir)
	}
	p := set.Prompt()
	if !strings.Contains(p, "- pdf: Fill PDF forms. Use when the user gives a PDF form.\n") || !strings.Contains(p, "load_skill") {
		t.Errorf("prompt:\n%s", p)
	}

	sc := &scope{}
	out, failed := call(t, set, sc, "list_skills", `{}`)
	if failed || !strings.Contains(out, "- pdf: Fill PDF forms") || !strings.Contains(out, "- review: Review code carefully.") {
		t.Errorf("list_skills: %q", out)
	}
	out, failed = call(t, set, sc, "load_skill", `{"name":"pdf"}`)
	if failed || !strings.Contains(out, "Read reference.md first.") || !strings.Contains(out, "- reference.md\n") || !strings.Contains(out, "- scripts/fill.py\n") || strings.Contains(out, "SKILL.md\n") {
		t.Errorf("load_skill: %q", out)
	}
	out, failed = call(t, set, sc, "read_skill_file", `{"name":"pdf","path":"reference.md"}`)
	if failed || out != "Field names are case-sensitive." {
		t.Errorf("read_skill_file: %q", out)
	}
	if sc.tainted {
		t.Error("a trusted skill tainted the call")
	}
	if out, failed = call(t, set, sc, "load_skill", `{"name":"nope"}`); !failed || !strings.Contains(out, "list_skills") {
		t.Errorf("an unknown skill: %q", out)
	}
}

// TestUntrustedSkillsTaint: what comes from an untrusted source marks
// the call's result untrusted, and its description stays out of the
// system prompt.
func TestUntrustedSkillsTaint(t *testing.T) {
	mine, theirs := t.TempDir(), t.TempDir()
	put(t, mine, map[string]string{"review/SKILL.md": "---\nname: review\ndescription: Review code.\n---\nbody"})
	put(t, theirs, map[string]string{"pdf/SKILL.md": pdfSkill, "pdf/reference.md": "ref"})
	set, err := skills.Open([]skills.Source{{Dir: mine, Trusted: true}, {Dir: theirs}}, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := set.Prompt(); strings.Contains(p, "Fill PDF") || !strings.Contains(p, "- review: Review code.") || !strings.Contains(p, "1 skill(s) from untrusted sources") {
		t.Errorf("prompt:\n%s", p)
	}
	for _, c := range []struct{ tool, args string }{
		{"list_skills", `{}`},
		{"load_skill", `{"name":"pdf"}`},
		{"read_skill_file", `{"name":"pdf","path":"reference.md"}`},
	} {
		sc := &scope{}
		if _, failed := call(t, set, sc, c.tool, c.args); failed || !sc.tainted {
			t.Errorf("%s %s: failed %v, tainted %v", c.tool, c.args, failed, sc.tainted)
		}
	}
	sc := &scope{}
	call(t, set, sc, "load_skill", `{"name":"review"}`)
	if sc.tainted {
		t.Error("the trusted skill tainted the call")
	}
}

// TestHostileSkillFolders: each malformed folder is a clear error naming
// the file and what is wrong.
func TestHostileSkillFolders(t *testing.T) {
	cases := []struct {
		name  string
		skill string // SKILL.md of folder "x"
		want  error
		says  string
	}{
		{"no front matter", "# x\nbody", skills.ErrFormat, "no front matter"},
		{"unclosed", "---\nname: x\ndescription: d\n", skills.ErrFormat, `no closing "---"`},
		{"bad yaml", "---\nname: x\ndescription: [unclosed\n---\n", skills.ErrFormat, "front matter: yaml:"},
		{"a list, not a mapping", "---\n- a\n---\n", skills.ErrFormat, "want a mapping"},
		{"no name", "---\ndescription: d\n---\n", skills.ErrFormat, "name is missing"},
		{"bad name", "---\nname: x_y\ndescription: d\n---\n", skills.ErrFormat, `name "x_y": want at most 64 lowercase letters`},
		{"name not the folder's", "---\nname: y\ndescription: d\n---\n", skills.ErrFormat, "folder's name"},
		{"no description", "---\nname: x\n---\n", skills.ErrFormat, "description is missing"},
		{"description a map", "---\nname: x\ndescription: {a: b}\n---\n", skills.ErrFormat, "must be a string"},
		{"long description", "---\nname: x\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", skills.ErrFormat, "over 1024"},
		{"not UTF-8", "---\nname: x\ndescription: \xff\n---\n", skills.ErrFormat, "UTF-8"},
		{"huge", "---\nname: x\ndescription: d\n---\n" + strings.Repeat("b", 300<<10), skills.ErrTooLarge, "over 262144 bytes"},
		{"alias bomb", "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\nname: x\n---\n", skills.ErrFormat, "description is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			put(t, dir, map[string]string{"x/SKILL.md": c.skill})
			_, err := skills.Open([]skills.Source{{Dir: dir}}, skills.Options{})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), filepath.Join("x", "SKILL.md")) {
				t.Errorf("err = %v, want %v saying %q and naming the file", err, c.want, c.says)
			}
		})
	}
}

func TestOpenRefusesDuplicatesAndTooMany(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	put(t, a, map[string]string{"pdf/SKILL.md": pdfSkill})
	put(t, b, map[string]string{"pdf/SKILL.md": pdfSkill, "other/SKILL.md": "---\nname: other\ndescription: d\n---\n"})
	if _, err := skills.Open([]skills.Source{{Dir: a}, {Dir: b}}, skills.Options{}); !errors.Is(err, skills.ErrDuplicate) {
		t.Errorf("two skills named pdf: %v", err)
	}
	if _, err := skills.Open([]skills.Source{{Dir: b}}, skills.Options{MaxSkills: 1}); !errors.Is(err, skills.ErrTooMany) {
		t.Errorf("over MaxSkills: %v", err)
	}
	if _, err := skills.Open([]skills.Source{{Dir: t.TempDir()}}, skills.Options{}); err == nil || !strings.Contains(err.Error(), "holds no skill") {
		t.Errorf("an empty directory: %v", err)
	}
	// A skill folder named directly.
	set, err := skills.Open([]skills.Source{{Dir: filepath.Join(a, "pdf")}}, skills.Options{})
	if err != nil || len(set.Skills()) != 1 {
		t.Errorf("a skill folder itself: %v", err)
	}
}

// TestReadSkillFileStaysInTheFolder: the model's path cannot leave the
// skill's folder, by "..", an absolute path or a link; huge, binary and
// irregular files are refused. Each refusal is a result the model reads.
func TestReadSkillFileStaysInTheFolder(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	put(t, outside, map[string]string{"secret.txt": "PRIVATE"})
	put(t, dir, map[string]string{
		"pdf/SKILL.md": pdfSkill, "pdf/big.md": strings.Repeat("x", 2048), "pdf/logo.png": "\x89PNG\xff\xfe",
		"sibling.txt": "PRIVATE sibling",
	})
	sk := filepath.Join(dir, "pdf")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(sk, "link.md")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := os.Symlink(outside, filepath.Join(sk, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := testsys.Mkfifo(filepath.Join(sk, "fifo.md")); err != nil {
		t.Fatal(err)
	}
	set, err := skills.Open([]skills.Source{{Dir: dir}}, skills.Options{MaxFileBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, says string }{
		{"../sibling.txt", "leaves the skill's folder"},
		{"scripts/../../sibling.txt", "leaves the skill's folder"},
		{filepath.Join(dir, "sibling.txt"), "leaves the skill's folder"},
		{"link.md", "leaves the skill's folder"},
		{"linkdir/secret.txt", "leaves the skill's folder"},
		{"big.md", "over 1024 bytes"},
		{"logo.png", "not text"},
		{"fifo.md", "not a regular file"},
		{"missing.md", "no such file"},
	} {
		out, failed := call(t, set, &scope{}, "read_skill_file", `{"name":"pdf","path":`+strconvQuote(c.path)+`}`)
		if !failed || !strings.Contains(out, c.says) || strings.Contains(out, "PRIVATE") {
			t.Errorf("%s: failed %v, %q; want a refusal saying %q", c.path, failed, out, c.says)
		}
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSkillFileLinkedOut: a SKILL.md that is a link out of its folder
// is refused, not read into the model's context.
func TestSkillFileLinkedOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	put(t, outside, map[string]string{"x/SKILL.md": "---\nname: x\ndescription: PRIVATE\n---\n"})
	if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x", "SKILL.md"), filepath.Join(dir, "x", "SKILL.md")); err != nil {
		t.Skip("no symlinks:", err)
	}
	if set, err := skills.Open([]skills.Source{{Dir: dir}}, skills.Options{}); err == nil {
		t.Errorf("a SKILL.md linking out was read: %+v", set.Skills())
	}
}

// TestLoadSkillListingIsBounded: a folder of many files lists some and
// says there are more; the walk stops.
func TestLoadSkillListingIsBounded(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"x/SKILL.md": "---\nname: x\ndescription: d\n---\nbody"}
	for i := range skills.MaxListedFiles + 5 {
		files[fmt.Sprintf("x/f%04d.md", i)] = ""
	}
	put(t, dir, files)
	set, err := skills.Open([]skills.Source{{Dir: dir, Trusted: true}}, skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := call(t, set, nil, "load_skill", `{"name":"x"}`)
	if n := strings.Count(out, "\n- f"); n != skills.MaxListedFiles || !strings.Contains(out, "and more") {
		t.Errorf("%d files listed, want %d and a note", n, skills.MaxListedFiles)
	}
}
