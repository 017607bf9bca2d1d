// Package rules reads a project's rule files (AGENTS.md, CLAUDE.md) and
// puts them before the agent's system prompt.
//
//	f, ok, err := rules.Discover(".", rules.Options{})
//	if err != nil {
//		return err // too large, not text, a link out of the repository
//	}
//	if ok {
//		system = rules.Prompt([]rules.File{f}, system)
//		rules.Trace(tracer, f)
//	}
//
// # Discovery
//
// [Discover] looks, in the directory it starts from and then in each
// parent up to the repository's root (the first directory holding .git),
// for AGENTS.md, .agents/AGENTS.md, CLAUDE.md and .claude/CLAUDE.md, in
// that order: the first file found is the one used. Outside a repository
// only the starting directory is searched, so a file in a parent nobody
// chose (a home directory, /tmp) is never read.
//
// # Trust
//
// A rule file is read as instructions: whoever wrote it steers the model.
// A file a checkout brings was written by the checkout's authors, so
// discovery is something a program (or the CLI's --rules auto) turns on;
// the file used is traced with its path and sha256, and a discovered file
// must lie inside the repository (a symbolic link out of it, to a key or
// a file of the user's, is refused rather than sent to the model).
package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/trace"
)

// DefaultMaxBytes bounds one rule file when Options.MaxBytes is 0. A rule
// file rides along in every model call of every run: 64 KiB is some
// 16 000 tokens each time.
const DefaultMaxBytes = 64 << 10

// Names are the files discovery looks for in each directory, in order.
var Names = [...]string{"AGENTS.md", ".agents/AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md"}

// Errors of Read and Discover, wrapped with the file's path.
var (
	// ErrTooLarge: the file is over Options.MaxBytes.
	ErrTooLarge = errors.New("rules: rule file too large")
	// ErrNotText: the file is not UTF-8 text.
	ErrNotText = errors.New("rules: rule file is not UTF-8 text")
	// ErrOutside: a discovered file (or a directory on its path) is a
	// symbolic link leading out of the repository.
	ErrOutside = errors.New("rules: rule file leads out of the repository")
)

// Options configure Read and Discover. The zero value works.
type Options struct {
	// MaxBytes bounds one file; 0 means DefaultMaxBytes.
	MaxBytes int64
}

func (o Options) max() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

// File is one rule file as read.
type File struct {
	// Path is the file's path, as given or as found.
	Path string
	// Text is its content.
	Text string
	// SHA256 is the hex sha256 of Text: which version steered the run.
	SHA256 string
	// Discovered reports that Discover found it (nobody named it).
	Discovered bool
}

// Read reads the rule file at path, which someone named: it may lie
// anywhere. It fails for a file over the bound, one that is not UTF-8
// text, and one that is not a regular file (a FIFO would block forever).
func Read(path string, opts Options) (File, error) {
	b, err := safefile.Read(path, opts.max())
	return file(path, b, err, opts)
}

// Discover finds the rule file of dir as the package doc says, and reads
// it. It returns false, and no error, when there is none.
func Discover(dir string, opts Options) (File, bool, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return File{}, false, fmt.Errorf("rules: %w", err)
	}
	top := repoRoot(dir)
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return File{}, false, fmt.Errorf("rules: %w", err)
	}
	root, err := os.OpenRoot(realTop)
	if err != nil {
		return File{}, false, fmt.Errorf("rules: %w", err)
	}
	defer root.Close()
	for d := dir; ; d = filepath.Dir(d) {
		for _, name := range Names {
			path := filepath.Join(d, name)
			if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			rel, err := inside(realTop, path)
			if err != nil {
				return File{Path: path, Discovered: true}, false, err
			}
			// Read what the links resolved to through root: a link
			// swapped in after the check still cannot lead out.
			b, err := safefile.ReadIn(root, rel, opts.max())
			f, err := file(path, b, err, opts)
			f.Discovered = true
			return f, err == nil, err
		}
		if d == top {
			return File{}, false, nil
		}
	}
}

// inside returns path's location in realTop, its links resolved, and
// fails with ErrOutside when that is not within realTop.
func inside(realTop, path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("rules: %w", err)
	}
	rel, err := filepath.Rel(realTop, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s is %s, outside %s: rule files are read as instructions, and a link out of the checkout could send a file of yours to the model", ErrOutside, path, real, realTop)
	}
	return rel, nil
}

// repoRoot returns the first of dir and its parents that holds .git, or
// dir itself when none does.
func repoRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// file checks what was read from path.
func file(path string, b []byte, err error, opts Options) (File, error) {
	switch {
	case errors.Is(err, safefile.ErrTooLarge):
		return File{Path: path}, fmt.Errorf("%w: %s is over %d bytes: it is sent with every model call; keep it short, and move long reference material into a skill (--skills), which the model loads when it needs it", ErrTooLarge, path, opts.max())
	case err != nil:
		return File{Path: path}, fmt.Errorf("rules: %w", err)
	case !utf8.Valid(b):
		return File{Path: path}, fmt.Errorf("%w: %s", ErrNotText, path)
	}
	sum := sha256.Sum256(b)
	return File{Path: path, Text: string(b), SHA256: hex.EncodeToString(sum[:])}, nil
}

// Prompt returns system with the rule files' text before it, each under
// a heading naming its file. Files with no text add nothing.
func Prompt(files []File, system string) string {
	var b strings.Builder
	for _, f := range files {
		text := strings.TrimSpace(f.Text)
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "# Project rules (%s)\n\n%s\n\n", filepath.Base(f.Path), text)
	}
	if b.Len() == 0 {
		return system
	}
	b.WriteString(system)
	return b.String()
}

// TraceType is the trace event of a rule file used by a runtime. Its
// payload is trace.Fields: path, sha256, bytes and discovered.
const TraceType trace.Type = "rules_loaded"

// Trace emits f's rules_loaded event on tr (nil: nothing).
func Trace(tr *trace.Tracer, f File) {
	tr.Emit(trace.Event{Type: TraceType, Payload: trace.Fields{
		"path": f.Path, "sha256": f.SHA256, "bytes": len(f.Text), "discovered": f.Discovered,
	}})
}
