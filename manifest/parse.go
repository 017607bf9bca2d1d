package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	// The scanner behind Unmarshal explains syntax errors better than the
	// token reader the walk uses ("looking for beginning of object key
	// string"), so it speaks first.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := se.Offset - 1
			if off < 0 {
				off = 0
			}
			if se.Offset >= int64(len(data)) && strings.HasPrefix(se.Error(), "unexpected end") {
				off = int64(len(data))
			}
			return fail(off, "", syntaxMessage(err))
		}
	}
	w := walk(data)
	if w.err != nil {
		return fail(w.errOff, w.errField, w.err)
	}

	// The version decides how to read the rest, so it is checked before
	// unknown fields: a newer file gets "unsupported version", not a
	// complaint about the fields that version added.
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fail(0, "", errors.New("the top level must be a JSON object"))
	}
	vOff := w.offsets["version"]
	switch v := string(head.Version); {
	case head.Version == nil:
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

	m := &Manifest{tools: make(map[string]Entry, len(f.Tools))}
	for sum, ej := range f.Tools {
		at := func(field string) string {
			p := "tools[" + strconv.Quote(sum) + "]"
			if field != "" {
				p += "." + field
			}
			return p
		}
		off := func(field string) int64 { return w.offsets[at(field)] }
		e := Entry{SHA256: sum, File: ej.File, Name: ej.Name, Limits: ej.Limits, ApprovedBy: ej.ApprovedBy, Note: ej.Note, SidecarSHA256: ej.Sidecar}
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
	limitsShape = &shape{fields: map[string]*shape{
		"memory_mb": scalarShape, "timeout_ms": scalarShape, "output_bytes": scalarShape, "http_response_bytes": scalarShape,
	}}
	entryShape = &shape{fields: map[string]*shape{
		"file": scalarShape, "name": scalarShape, "grants": {elem: scalarShape}, "limits": limitsShape,
		"approved_by": scalarShape, "approved_at": scalarShape, "note": scalarShape, "sidecar_sha256": scalarShape,
	}}
	rootShape = &shape{fields: map[string]*shape{
		"version": scalarShape, "tools": {anyKey: entryShape},
	}}
)

// walkResult is what one pass over the tokens finds: the first syntax error
// or duplicate key (fatal at once), the first unknown field (reported after
// the version check), and where each value starts.
type walkResult struct {
	err      error
	errOff   int64
	errField string

	unknownErr   error
	unknownOff   int64
	unknownField string

	offsets map[string]int64 // value start by field path
}

type frame struct {
	path    string
	isObj   bool
	wantKey bool
	key     string
	index   int
	keys    map[string]bool
	shape   *shape
}

// walk checks the syntax of data token by token. encoding/json keeps the
// last of two equal keys silently; in a trust file a second entry for the
// same hash could hide the first, so duplicates are refused here.
func walk(data []byte) walkResult {
	w := walkResult{offsets: map[string]int64{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	done := false
	for {
		start := skipSpace(data, dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			if !done {
				w.err, w.errOff = errors.New("unexpected end of file"), int64(len(data))
			}
			return w
		}
		if err != nil {
			w.err, w.errOff = syntaxMessage(err), start
			var se *json.SyntaxError
			if errors.As(err, &se) {
				w.errOff = se.Offset
			}
			return w
		}
		if done {
			w.err, w.errOff = errors.New("unexpected data after the manifest object"), start
			return w
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isObj && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				w.endValue(&stack, &done)
				continue
			}
			key := tok.(string)
			p := childPath(top.path, key, -1)
			if top.keys[key] {
				w.err, w.errOff, w.errField = fmt.Errorf("duplicate key %q", key), start, p
				return w
			}
			top.keys[key] = true
			top.key = key
			top.wantKey = false
			if w.unknownErr == nil && top.shape != nil {
				switch {
				case top.shape.fields != nil && top.shape.fields[key] == nil:
					w.unknownErr, w.unknownOff, w.unknownField = fmt.Errorf("unknown field %q", key), start, p
				case top.shape.anyKey == entryShape && !ValidSum(key):
					w.unknownErr, w.unknownOff, w.unknownField = errors.New("the key must be the module's sha256: 64 lower-case hex digits"), start, p
				}
			}
			continue
		}
		if d, ok := tok.(json.Delim); ok && d == ']' {
			stack = stack[:len(stack)-1]
			w.endValue(&stack, &done)
			continue
		}
		if d, ok := tok.(json.Delim); top == nil && (!ok || d != '{') {
			w.err, w.errOff = errors.New("the top level must be a JSON object"), start
			return w
		}
		// A value: its path and shape come from the enclosing container.
		path, sh := "", rootShape
		if top != nil {
			if top.isObj {
				path = childPath(top.path, top.key, -1)
				sh = childShape(top.shape, top.key, false)
			} else {
				path = childPath(top.path, "", top.index)
				sh = childShape(top.shape, "", true)
				top.index++
			}
		}
		if len(stack) < 5 {
			w.offsets[path] = start
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, &frame{path: path, isObj: true, wantKey: true, keys: map[string]bool{}, shape: sh})
				continue
			case '[':
				stack = append(stack, &frame{path: path, shape: sh})
				continue
			}
		}
		w.endValue(&stack, &done)
	}
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

// endValue marks the end of a value in the enclosing container.
func (w *walkResult) endValue(stack *[]*frame, done *bool) {
	if len(*stack) == 0 {
		*done = true
		return
	}
	if top := (*stack)[len(*stack)-1]; top.isObj {
		top.wantKey = true
	}
}

func childPath(parent, key string, index int) string {
	if index >= 0 {
		return fmt.Sprintf("%s[%d]", parent, index)
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

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
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
