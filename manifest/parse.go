package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrCorrupt is matched (errors.Is) by the error for a manifest file that
// is not a valid manifest: bad JSON, a duplicate key, an unknown field, a
// grant outside the grammar, a missing field.
var ErrCorrupt = errors.New("manifest: corrupt manifest")

// ErrUnsupportedVersion is matched (errors.Is) by the error for a manifest
// whose "version" this package does not read.
var ErrUnsupportedVersion = errors.New("manifest: unsupported manifest version")

// ParseError says where and why a manifest file is not valid. It matches
// [ErrCorrupt] or [ErrUnsupportedVersion] with errors.Is, and unwraps to
// the underlying cause (a *[GrantError] for a bad grant).
type ParseError struct {
	// Path is the file, or "" when bytes were parsed.
	Path string
	// Line and Column (1-based, column in characters) locate the problem;
	// Offset is the same place in bytes from the start. All are 0 when the
	// problem has no place (an empty file).
	Line, Column int
	Offset       int64
	// Field is where in the document the problem is, for example
	// `tools["9f86…"].grants[1]`; "" for a syntax error.
	Field string
	// Err is what is wrong.
	Err error

	version bool
}

func (e *ParseError) Error() string {
	var b bytes.Buffer
	b.WriteString("manifest: ")
	if e.Path != "" {
		b.WriteString(e.Path)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Path != "" {
		b.WriteString(" (the file was left unchanged: fix it or restore it from version control)")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt or ErrUnsupportedVersion, as fits.
func (e *ParseError) Is(target error) bool {
	if e.version {
		return target == ErrUnsupportedVersion
	}
	return target == ErrCorrupt
}

// Parse parses the bytes of a manifest file. An empty input is an error,
// not an empty manifest: only a missing file means "nothing approved yet"
// ([Store.Load]).
func Parse(data []byte) (*Manifest, error) {
	return parse("", data)
}

// UnmarshalJSON parses a manifest file's bytes into m, as [Parse] does.
func (m *Manifest) UnmarshalJSON(data []byte) error {
	parsed, err := Parse(data)
	if err != nil {
		return err
	}
	*m = *parsed
	return nil
}

func parse(path string, data []byte) (*Manifest, error) {
	fail := func(off int64, field string, err error) (*Manifest, error) {
		pe := &ParseError{Path: path, Field: field, Err: err}
		if off >= 0 {
			pe.Offset = off
			pe.Line, pe.Column = position(data, off)
		}
		return nil, pe
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(-1, "", errors.New("the file is empty (a manifest with no approvals is {\"version\": 1, \"tools\": {}})"))
	}
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return fail(0, "", errors.New("the file starts with a UTF-8 byte-order mark; save it without one"))
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			off += n
		}
		return fail(int64(off), "", errors.New("invalid UTF-8"))
	}

	if !json.Valid(data) {
		var se *json.SyntaxError
		err := json.Unmarshal(data, new(json.RawMessage))
		if !errors.As(err, &se) {
			return fail(0, "", fmt.Errorf("invalid JSON: %v", err))
		}
		off := max(se.Offset-1, 0)
		if strings.HasPrefix(se.Error(), "unexpected end") {
			off = int64(len(data))
		}
		return fail(off, "", syntaxMessage(err))
	}
	w := walk(data)
	if w.err != nil {
		return fail(w.errOff, w.errField, w.err)
	}

	// The version decides how to read the rest, so it is checked before
	// unknown fields: a newer file gets "unsupported version", not a
	// complaint about the fields that version added.
	vOff := w.offsets["version"]
	switch v := w.version; {
	case v == "":
		return fail(0, "", errors.New(`missing "version" (this format starts with {"version": 1, ...})`))
	case v == strconv.Itoa(Version):
	default:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fail(vOff, "version", fmt.Errorf("want the number %d, found %s", Version, v))
		}
		pe := &ParseError{Path: path, Field: "version", version: true,
			Err: fmt.Errorf("unsupported version %s (this autoagent reads version %d; use a newer autoagent)", v, Version)}
		pe.Offset = vOff
		pe.Line, pe.Column = position(data, vOff)
		return nil, pe
	}
	if w.unknownErr != nil {
		return fail(w.unknownOff, w.unknownField, w.unknownErr)
	}

	var f fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field, off := w.valueBefore(te.Offset)
			return fail(off, field, fmt.Errorf("want %s, found JSON %s", jsonKind(te.Type.Kind().String()), te.Value))
		}
		return fail(0, "", err)
	}

	m := &Manifest{tools: make(map[string]Entry, len(f.Tools)), sum: Sum(data)}
	for sum, ej := range f.Tools {
		at := func(field string) string {
			p := "tools[" + strconv.Quote(sum) + "]"
			if field != "" {
				p += "." + field
			}
			return p
		}
		off := func(field string) int64 { return w.offsets[at(field)] }
		limits, err := ej.Limits.limits()
		if err != nil {
			return fail(off("limits"), at("limits"), err)
		}
		e := Entry{SHA256: sum, File: ej.File, Name: ej.Name, Limits: limits, ApprovedBy: ej.ApprovedBy, Note: ej.Note, SidecarSHA256: ej.Sidecar, SkipTools: ej.SkipTools, Tools: ej.Tools, Source: Source(ej.Source)}
		if ej.File == "" {
			return fail(off(""), at("file"), errors.New("missing"))
		}
		if ej.Name == "" {
			return fail(off(""), at("name"), errors.New("missing"))
		}
		for i, s := range ej.Grants {
			g, err := ParseGrant(s)
			if err != nil {
				field := fmt.Sprintf("grants[%d]", i)
				return fail(off(field), at(field), err)
			}
			e.Grants = append(e.Grants, g)
		}
		if ej.ApprovedBy == "" {
			return fail(off(""), at("approved_by"), errors.New("missing (who approved these bytes)"))
		}
		if ej.ApprovedAt == "" {
			return fail(off(""), at("approved_at"), errors.New("missing (when, as 2026-11-29T10:00:00Z)"))
		}
		t, err := time.Parse(time.RFC3339, ej.ApprovedAt)
		if err != nil {
			return fail(off("approved_at"), at("approved_at"), fmt.Errorf("%q is not an RFC 3339 time such as 2026-11-29T10:00:00Z", ej.ApprovedAt))
		}
		e.ApprovedAt = t
		if err := e.validate(); err != nil {
			return fail(off(""), at(""), err)
		}
		m.tools[sum] = e
	}
	return m, nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return goKind
}

// position turns a byte offset into a 1-based line and column (in
// characters).
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}

// shape describes the fields allowed at one place of the document, so an
// unknown field is reported where it is, not by name alone.
type shape struct {
	fields map[string]*shape // object with these keys
	anyKey *shape            // object with free keys, each value of this shape
	elem   *shape            // array of this shape
}

var (
	scalarShape = &shape{}
	limitsShape = &shape{fields: scalarFields(limitKeys)}
	entryShape  = &shape{fields: map[string]*shape{
		"file": scalarShape, "name": scalarShape, "grants": {elem: scalarShape}, "limits": limitsShape,
		"approved_by": scalarShape, "approved_at": scalarShape, "note": scalarShape, "sidecar_sha256": scalarShape,
		"skip_tools": {elem: scalarShape},
		"tools":      {elem: scalarShape},
		"source":     {fields: scalarFields([]string{"reference", "digest", "signer"})},
	}}
	rootShape = &shape{fields: map[string]*shape{
		"version": scalarShape, "tools": {anyKey: entryShape},
	}}
)

func scalarFields(keys []string) map[string]*shape {
	m := make(map[string]*shape, len(keys))
	for _, k := range keys {
		m[k] = scalarShape
	}
	return m
}

// walkResult is what one pass over a syntactically valid document finds:
// the first duplicate key or non-object top level (fatal at once), the
// first unknown field or malformed hash key (reported after the version
// check), the raw version, and where each value starts.
type walkResult struct {
	err      error
	errOff   int64
	errField string

	unknownErr   error
	unknownOff   int64
	unknownField string

	offsets map[string]int64 // value start by field path
	version string           // the raw top-level "version" value, "" when absent
}

// walker scans a document json.Valid accepted. encoding/json keeps the last
// of two equal keys silently; in a trust file a second entry for the same
// hash could hide the first, so duplicates are refused here. (It scans the
// bytes itself: json.Decoder.Token allocates an error value per scalar.)
type walker struct {
	data []byte
	i    int
	w    walkResult
}

func walk(data []byte) walkResult {
	k := &walker{data: data, w: walkResult{offsets: map[string]int64{}}}
	k.space()
	if k.i >= len(data) || data[k.i] != '{' {
		k.w.err, k.w.errOff = errors.New("the top level must be a JSON object"), int64(k.i)
		return k.w
	}
	k.value("", rootShape, 0)
	return k.w
}

func (k *walker) space() {
	for k.i < len(k.data) {
		switch k.data[k.i] {
		case ' ', '\t', '\r', '\n':
			k.i++
		default:
			return
		}
	}
}

// str skips a string starting at k.i and returns its decoded text.
func (k *walker) str() string {
	start := k.i
	k.i++ // opening quote
	escaped := false
	for k.data[k.i] != '"' {
		if k.data[k.i] == '\\' {
			escaped = true
			k.i++
		}
		k.i++
	}
	k.i++ // closing quote
	raw := k.data[start:k.i]
	if !escaped {
		return string(raw[1 : len(raw)-1])
	}
	var out string
	_ = json.Unmarshal(raw, &out) // valid JSON: cannot fail
	return out
}

// value scans one value at k.i; it returns false once a fatal problem is
// recorded.
func (k *walker) value(path string, sh *shape, depth int) bool {
	k.space()
	start := int64(k.i)
	if depth < 5 {
		k.w.offsets[path] = start
	}
	switch k.data[k.i] {
	case '{':
		k.i++
		keys := map[string]bool{}
		for {
			k.space()
			if k.data[k.i] == '}' {
				k.i++
				break
			}
			if k.data[k.i] == ',' {
				k.i++
				k.space()
			}
			keyOff := int64(k.i)
			key := k.str()
			p := childPath(path, key, -1)
			if keys[key] {
				k.w.err, k.w.errOff, k.w.errField = fmt.Errorf("duplicate key %q", key), keyOff, p
				return false
			}
			keys[key] = true
			if k.w.unknownErr == nil && sh != nil {
				switch {
				case sh.fields != nil && sh.fields[key] == nil:
					k.w.unknownErr, k.w.unknownOff, k.w.unknownField = fmt.Errorf("unknown field %q", key), keyOff, p
				case sh.anyKey == entryShape && !ValidSum(key):
					k.w.unknownErr, k.w.unknownOff, k.w.unknownField = errors.New("the key must be the module's sha256: 64 lower-case hex digits"), keyOff, p
				}
			}
			k.space()
			k.i++ // ':'
			if !k.value(p, childShape(sh, key, false), depth+1) {
				return false
			}
		}
	case '[':
		k.i++
		for idx := 0; ; idx++ {
			k.space()
			if k.data[k.i] == ']' {
				k.i++
				break
			}
			if k.data[k.i] == ',' {
				k.i++
			}
			if !k.value(childPath(path, "", idx), childShape(sh, "", true), depth+1) {
				return false
			}
		}
	case '"':
		k.str()
	default:
		for k.i < len(k.data) && !strings.ContainsRune(",}] \t\r\n", rune(k.data[k.i])) {
			k.i++
		}
	}
	if path == "version" && depth == 1 {
		switch k.data[start] {
		case '{', '[':
			k.w.version = "an object or array"
		default:
			k.w.version = string(k.data[start:k.i])
		}
	}
	return true
}

// valueBefore returns the innermost value starting before off: where a
// decoder that stopped at off was.
func (w *walkResult) valueBefore(off int64) (string, int64) {
	best, bestOff := "", int64(-1)
	for p, o := range w.offsets {
		if o < off && (o > bestOff || (o == bestOff && len(p) > len(best))) {
			best, bestOff = p, o
		}
	}
	if bestOff < 0 {
		bestOff = 0
	}
	return best, bestOff
}

func childPath(parent, key string, index int) string {
	if index >= 0 {
		return parent + "[" + strconv.Itoa(index) + "]"
	}
	if parent == "tools" {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func childShape(s *shape, key string, elem bool) *shape {
	switch {
	case s == nil:
		return nil
	case elem:
		return s.elem
	case s.fields != nil:
		return s.fields[key]
	}
	return s.anyKey
}

// syntaxMessage strips the "json: " prefix some decoder errors carry; the
// ParseError already says where it comes from.
func syntaxMessage(err error) error {
	msg := err.Error()
	if s, ok := bytes.CutPrefix([]byte(msg), []byte("json: ")); ok {
		return errors.New(string(s))
	}
	return err
}
