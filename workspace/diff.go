package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// Diff returns change id as a unified diff of each file it touched, from
// its before-image to its after-image. A module's change, whose
// after-image is unknown, is shown against the file as it is now.
func (w *Workspace) Diff(id int) (string, error) {
	c, err := w.Change(id)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range c.Files {
		before, err := w.image(f.Before)
		if err != nil {
			return "", err
		}
		var after []byte
		afterName := "b/" + f.Path
		if f.AfterUnknown {
			afterName += " (now)"
			w.mu.Lock()
			after, _, err = w.current(f.Path)
			w.mu.Unlock()
		} else if after, err = w.image(f.After); errors.Is(err, fs.ErrNotExist) {
			// A write stores no after-image: the next change of the
			// file stores it as its before-image. Until then the file
			// holds it, unless it was changed outside the workspace.
			w.mu.Lock()
			cur, h, cerr := w.current(f.Path)
			w.mu.Unlock()
			if cerr == nil && h == f.After {
				after, err = cur, nil
			} else {
				err = fmt.Errorf("workspace: change %d's result for %s is not kept: the file was changed outside the workspace since", id, f.Path)
			}
		}
		if err != nil {
			return "", err
		}
		beforeName := "a/" + f.Path
		if f.Before == "" {
			beforeName = "/dev/null"
		}
		if f.After == "" && !f.AfterUnknown {
			afterName = "/dev/null"
		}
		unified(&b, beforeName, afterName, before, after)
	}
	return b.String(), nil
}

// image returns the content named by h, nil for "" (absent).
func (w *Workspace) image(h string) ([]byte, error) {
	if h == "" {
		return nil, nil
	}
	return w.getBlob(h)
}

// maxDiffCells bounds the table of the line diff; past it, the changed
// middle of the files is shown as removed and added whole.
const maxDiffCells = 4 << 20

// unified writes the unified diff of a and b (three lines of context).
func unified(b *strings.Builder, an, bn string, a, c []byte) {
	if bytes.Equal(a, c) {
		return
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", an, bn)
	if !text(a) || !text(c) {
		b.WriteString("Binary files differ\n")
		return
	}
	x, y := lines(a), lines(c)
	ops := diffLines(x, y)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		ai, bi, an, bn := ops[start].ai, ops[start].bi, 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				an++
			}
			if o.kind != '-' {
				bn++
			}
		}
		fmt.Fprintf(b, "@@ -%s +%s @@\n", hunkRange(ai, an), hunkRange(bi, bn))
		for _, o := range ops[start:end] {
			b.WriteByte(o.kind)
			b.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func text(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

func lines(b []byte) []string {
	var out []string
	for l := range strings.Lines(string(b)) {
		out = append(out, l)
	}
	return out
}

// diffOp is one line of a diff: ' ', '-' or '+', with the indexes in a
// and b where it stands.
type diffOp struct {
	kind   byte
	line   string
	ai, bi int
}

// diffLines is a longest-common-subsequence line diff of x and y, after
// their common prefix and suffix.
func diffLines(x, y []string) []diffOp {
	p := 0
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	s := 0
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	var ops []diffOp
	for i := 0; i < p; i++ {
		ops = append(ops, diffOp{' ', x[i], i, i})
	}
	mx, my := x[p:len(x)-s], y[p:len(y)-s]
	n, m := len(mx), len(my)
	if n*m > maxDiffCells {
		for i, l := range mx {
			ops = append(ops, diffOp{'-', l, p + i, p})
		}
		for j, l := range my {
			ops = append(ops, diffOp{'+', l, p + n, p + j})
		}
	} else {
		// lcs[i][j]: the common subsequence of mx[i:] and my[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, diffOp{' ', mx[i], p + i, p + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, diffOp{'-', mx[i], p + i, p + j})
				i++
			default:
				ops = append(ops, diffOp{'+', my[j], p + i, p + j})
				j++
			}
		}
	}
	for k := 0; k < s; k++ {
		ops = append(ops, diffOp{' ', x[len(x)-s+k], len(x) - s + k, len(y) - s + k})
	}
	return ops
}
