package workspace

import (
	"path"
	"slices"
	"strings"
)

// maxPath bounds a path's length, as the host bounds a guest's.
const maxPath = 4096

// cleanPath turns a path given by a model or a module into a clean,
// slash-separated path relative to the workspace root, or refuses it.
// It is lexical: links are the os.Root's and the identity checks' work.
// "." is the root itself.
func cleanPath(p string) (string, error) {
	if p == "" || len(p) > maxPath || strings.IndexByte(p, 0) >= 0 {
		return "", ErrBadPath
	}
	if p[0] == '/' || p[0] == '\\' || volume(p) {
		return "", ErrAbsolute
	}
	if strings.IndexByte(p, '\\') >= 0 {
		return "", ErrBadPath
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrEscape
	}
	if reserved(c) {
		return "", ErrReserved
	}
	return c, nil
}

// volume reports whether p begins with a drive letter and a colon
// (`C:x`, `C:/x`): a volume path on Windows, refused everywhere so a
// workspace behaves the same on every platform.
func volume(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// reserved reports whether the clean path c is a journal directory or
// inside one, compared without case for case-insensitive file systems. A
// journal directory at any depth counts: a workspace opened inside
// another (_out in .) keeps its journal there.
func reserved(c string) bool {
	for c != "" {
		var elem string
		elem, c, _ = strings.Cut(c, "/")
		if strings.EqualFold(strings.TrimRight(elem, ". "), JournalDir) {
			return true
		}
	}
	return false
}

// normExts normalizes an allowlist: lower case, each with its dot.
func normExts(exts []string) []string {
	if exts == nil {
		return nil
	}
	out := []string{}
	for _, e := range exts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// ParseExts parses a comma-separated extension list ("md,.json"), as the
// CLI's --workspace-read-ext and --workspace-write-ext take it; "" is nil
// (every extension).
func ParseExts(list string) []string {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	return normExts(strings.Split(list, ","))
}

// extOf is the lower-case extension of the clean path c, "" for none.
func extOf(c string) string { return strings.ToLower(path.Ext(c)) }

// checkExt refuses c when allow is not nil and does not hold its
// extension.
func checkExt(c string, allow []string, write bool) error {
	if allow == nil {
		return nil
	}
	e := extOf(c)
	if e != "" && slices.Contains(allow, e) {
		return nil
	}
	return &ExtensionError{Ext: e, Allowed: slices.Clone(allow), Write: write}
}
