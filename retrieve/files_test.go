package retrieve_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testsys"
	"github.com/autoagent-go/autoagent/retrieve"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilesRanksByBM25(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "deploy.md", "# Deploying\n\nThe staging cluster is deployed with make ship.\n")
	write(t, dir, "notes/people.md", "Ada runs the billing team.\nGrace owns the compiler.\n")
	write(t, dir, ".git/config", "deploy staging cluster secrets")
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := f.Retrieve(context.Background(), "how is staging deployed?", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Source != "deploy.md:1-3" || !strings.Contains(ps[0].Text, "make ship") {
		t.Fatalf("passages %+v, want deploy.md:1-3 alone (.git is not indexed)", ps)
	}
	if !ps[0].Untrusted || ps[0].Score <= 0 {
		t.Errorf("a file's passage must be untrusted by default and scored: %+v", ps[0])
	}
	if ps, _ := f.Retrieve(context.Background(), "who owns the compiler", 0); ps != nil {
		t.Errorf("k = 0 returned %v", ps)
	}
	trusted, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Trusted: true})
	if err != nil {
		t.Fatal(err)
	}
	if ps, _ := trusted.Retrieve(context.Background(), "compiler", 1); len(ps) != 1 || ps[0].Untrusted || ps[0].Source != "notes/people.md:1-2" {
		t.Errorf("trusted documents: %+v", ps)
	}
}

func TestFilesChunksByLines(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 40 {
		b.WriteString(strings.Repeat("word ", 10))
		if i == 30 {
			b.WriteString("needle")
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("é", 1000) + "\n") // a line longer than a chunk, cut on runes
	write(t, dir, "long.txt", b.String())
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{ChunkBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := f.Retrieve(context.Background(), "needle", 1)
	if len(ps) != 1 || ps[0].Source != "long.txt:31-33" {
		t.Fatalf("needle found in %+v, want the chunk of lines 31-33 (three lines of 51 bytes a chunk)", ps)
	}
	if f.Len() < 40*51/200 {
		t.Errorf("%d chunks", f.Len())
	}
	all, _ := f.Retrieve(context.Background(), "word é", 1000)
	for _, p := range all {
		if len(p.Text) > 200 {
			t.Errorf("chunk %s of %d bytes, over 200", p.Source, len(p.Text))
		}
		if !strings.HasPrefix(p.Source, "long.txt:") {
			t.Errorf("source %q", p.Source)
		}
	}
}

// TestFilesHostile: what a directory of documents may hold that must not
// be read, each skipped with a reason, the rest indexed.
func TestFilesHostile(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret.txt", "the launch code is 0000")
	dir := t.TempDir()
	write(t, dir, "ok.md", "launch checklist: fuel, weather, code review")
	write(t, dir, "huge.txt", strings.Repeat("launch ", 200_000))
	write(t, dir, "binary.bin", "launch\x00\x01\x02")
	write(t, dir, "latin1.txt", "launch caf\xe9")
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "escape.txt")))
	must(t, os.Symlink(outside, filepath.Join(dir, "outdir")))
	write(t, dir, "sub/x.md", "sub")
	must(t, os.Symlink("sub", filepath.Join(dir, "linkeddir")))
	must(t, os.Symlink("ok.md", filepath.Join(dir, "inside.md")))
	must(t, os.Symlink("/nonexistent/x", filepath.Join(dir, "dangling.md")))
	if err := testsys.Mkfifo(filepath.Join(dir, "fifo.md")); err != nil {
		t.Logf("no FIFO on this system: %v", err)
	}
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, s := range f.Skipped() {
		reasons[s.Path] = s.Reason
	}
	for name, want := range map[string]string{
		"huge.txt":    "larger than 1048576 bytes",
		"binary.bin":  "binary",
		"latin1.txt":  "binary",
		"escape.txt":  "leading out of the directory",
		"linkeddir":   "linked directory",
		"outdir":      "leading out of the directory",
		"dangling.md": "leading out of the directory, or to nothing",
	} {
		if !strings.Contains(reasons[name], want) {
			t.Errorf("%s: skipped for %q, want a reason containing %q", name, reasons[name], want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fifo.md")); err == nil && !strings.Contains(reasons["fifo.md"], "not a regular file") {
		t.Errorf("fifo.md: skipped for %q", reasons["fifo.md"])
	}
	ps, _ := f.Retrieve(context.Background(), "launch code", 10)
	var sources []string
	for _, p := range ps {
		sources = append(sources, p.Source)
		if strings.Contains(p.Text, "0000") {
			t.Errorf("the file outside the directory was read through %s", p.Source)
		}
	}
	if strings.Join(sources, " ") != "inside.md:1 ok.md:1" {
		t.Errorf("sources %v, want the document and its link inside the directory", sources)
	}
}

func TestFilesBounds(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		write(t, dir, n+".txt", "topic "+n)
	}
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	if ps, _ := f.Retrieve(context.Background(), "topic", 10); len(ps) != 2 {
		t.Errorf("%d passages past MaxFiles 2", len(ps))
	}
	if sk := f.Skipped(); len(sk) != 1 || sk[0].Path != "c.txt" || !strings.Contains(sk[0].Reason, "MaxFiles") {
		t.Errorf("skipped %+v, want c.txt noted as past the bound", sk)
	}
	f, _ = retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{MaxTotalBytes: 15})
	if sk := f.Skipped(); len(sk) != 1 || sk[0].Path != "c.txt" || !strings.Contains(sk[0].Reason, "MaxTotalBytes") {
		t.Errorf("skipped %+v, want c.txt noted as past the byte bound", sk)
	}
	// Skipped files count against the bounds too: a directory of
	// countless binary files is not walked to its end.
	bin := t.TempDir()
	for i := range 50 {
		write(t, bin, fmt.Sprintf("b%02d.bin", i), strings.Repeat("\x00", 1000))
	}
	f, _ = retrieve.OpenFiles(context.Background(), bin, retrieve.FilesOptions{MaxFiles: 10})
	if sk := f.Skipped(); len(sk) != 11 || !strings.Contains(sk[10].Reason, "MaxFiles") {
		t.Errorf("%d files skipped, want 10 binary ones then the bound", len(sk))
	}
	f, _ = retrieve.OpenFiles(context.Background(), bin, retrieve.FilesOptions{MaxTotalBytes: 5500})
	if sk := f.Skipped(); len(sk) != 6 || !strings.Contains(sk[5].Reason, "MaxTotalBytes") {
		t.Errorf("%d files skipped, want 5 binary ones then the byte bound", len(sk))
	}
	if _, err := retrieve.OpenFiles(context.Background(), filepath.Join(dir, "none"), retrieve.FilesOptions{}); err == nil {
		t.Error("a missing directory opened")
	}
	if _, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{MaxFiles: -1}); !errors.Is(err, retrieve.ErrInvalid) {
		t.Errorf("negative bound: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFilesConcurrentRetrieve: one Files serves concurrent runs (run with
// -race).
func TestFilesConcurrentRetrieve(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		write(t, dir, fmt.Sprintf("d%d.md", i), fmt.Sprintf("topic %d alpha beta", i))
	}
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{Embed: hashEmbed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 50 {
				ps, err := f.Retrieve(context.Background(), fmt.Sprintf("topic %d", (g+i)%20), 3)
				if err == nil && len(ps) == 0 {
					err = errors.New("nothing found")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
