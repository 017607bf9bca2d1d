package gemini

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// argTree assembles the arguments Gemini 3 streams as partialArgs: each
// piece sets a value at a JSON path ("$.location", "$.items[0].name",
// "$['odd.key']"), and a string may arrive in several pieces, each but the
// last marked willContinue. Keys keep the order they arrived in, so the
// arguments read as the model wrote them.
type argTree struct {
	root *jnode
	// continuing holds the paths whose string value is still arriving.
	continuing map[string]bool
}

type jnode struct {
	keys   []string          // object keys in arrival order
	fields map[string]*jnode // object members
	elems  []*jnode          // array elements
	isArr  bool
	isVal  bool
	val    any // string, float64, bool or nil
}

// newArgTree starts from the args object a call may already carry.
func newArgTree(initial json.RawMessage) *argTree {
	t := &argTree{root: &jnode{fields: map[string]*jnode{}}, continuing: map[string]bool{}}
	if len(initial) > 0 {
		dec := json.NewDecoder(bytes.NewReader(initial))
		if n, err := decodeNode(dec); err == nil && n.fields != nil {
			t.root = n
		}
	}
	return t
}

func (t *argTree) apply(pa wirePartialArg) {
	path, ok := parsePath(pa.JSONPath)
	if !ok || len(path) == 0 {
		return // a path we cannot place is ignored rather than guessed
	}
	n := t.root
	for _, seg := range path {
		n = n.child(seg)
	}
	switch {
	case pa.StringValue != nil:
		if prev, ok := n.val.(string); ok && n.isVal && t.continuing[pa.JSONPath] {
			n.val = prev + *pa.StringValue
		} else {
			n.setVal(*pa.StringValue)
		}
	case pa.NumberValue != nil:
		n.setVal(*pa.NumberValue)
	case pa.BoolValue != nil:
		n.setVal(*pa.BoolValue)
	case pa.NullValue != nil:
		n.setVal(nil)
	}
	if pa.WillContinue {
		t.continuing[pa.JSONPath] = true
	} else {
		delete(t.continuing, pa.JSONPath)
	}
}

func (n *jnode) setVal(v any) {
	*n = jnode{isVal: true, val: v}
}

// child returns the member or element seg of n, creating it (and turning n
// into an object or array as seg requires).
func (n *jnode) child(seg pathSeg) *jnode {
	if seg.key != nil {
		if n.fields == nil {
			*n = jnode{fields: map[string]*jnode{}}
		}
		c, ok := n.fields[*seg.key]
		if !ok {
			c = &jnode{fields: map[string]*jnode{}}
			n.fields[*seg.key] = c
			n.keys = append(n.keys, *seg.key)
		}
		return c
	}
	if !n.isArr {
		*n = jnode{isArr: true}
	}
	for len(n.elems) <= seg.index {
		n.elems = append(n.elems, &jnode{fields: map[string]*jnode{}})
	}
	return n.elems[seg.index]
}

func (t *argTree) json() json.RawMessage {
	var b bytes.Buffer
	t.root.write(&b)
	return b.Bytes()
}

func (n *jnode) write(b *bytes.Buffer) {
	switch {
	case n.isVal:
		writeScalar(b, n.val)
	case n.isArr:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeScalar(b, k)
			b.WriteByte(':')
			n.fields[k].write(b)
		}
		b.WriteByte('}')
	}
}

func writeScalar(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case float64:
		// Whole numbers are written as integers (2, not 2e+00), so an
		// "integer" schema accepts them.
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			b.WriteString(strconv.FormatInt(int64(x), 10))
		} else {
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case json.Number:
		b.WriteString(x.String())
	default:
		enc := json.NewEncoder(b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x) // strings, bools and nil always encode
		b.Truncate(b.Len() - 1)
	}
}

// decodeNode reads one JSON value into a node, keeping key order.
func decodeNode(dec *json.Decoder) (*jnode, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &jnode{fields: map[string]*jnode{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				c, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := n.fields[k]; !dup {
					n.keys = append(n.keys, k)
				}
				n.fields[k] = c
			}
			_, err := dec.Token()
			return n, err
		}
		n := &jnode{isArr: true}
		for dec.More() {
			c, err := decodeNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, c)
		}
		_, err := dec.Token()
		return n, err
	default:
		return &jnode{isVal: true, val: v}, nil
	}
}

// maxArrayIndex bounds the array index a path may name.
const maxArrayIndex = 1 << 16

// quotedName reads a quoted member name at the start of s ('name' or
// "name", with backslash escapes) and returns it and the rest of s.
func quotedName(s string) (name, rest string, ok bool) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == q:
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// pathSeg is one step of a JSON path: an object key or an array index.
type pathSeg struct {
	key   *string
	index int
}

// parsePath parses the RFC 9535 subset Gemini uses: "$" followed by
// ".name", "['name']", "[\"name\"]" or "[3]" steps. A path it cannot
// parse is refused whole, so nothing is created for it.
func parsePath(p string) ([]pathSeg, bool) {
	rest, ok := strings.CutPrefix(p, "$")
	if !ok {
		return nil, false
	}
	var segs []pathSeg
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, false
			}
			k := rest[:end]
			segs = append(segs, pathSeg{key: &k})
			rest = rest[end:]
		case '[':
			if len(rest) > 1 && (rest[1] == '\'' || rest[1] == '"') {
				k, after, ok := quotedName(rest[1:])
				if !ok || !strings.HasPrefix(after, "]") {
					return nil, false
				}
				segs = append(segs, pathSeg{key: &k})
				rest = after[1:]
				continue
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, false
			}
			i, err := strconv.Atoi(rest[1:end])
			// An absurd index is refused rather than allocated.
			if err != nil || i < 0 || i > maxArrayIndex {
				return nil, false
			}
			segs = append(segs, pathSeg{index: i})
			rest = rest[end+1:]
		default:
			return nil, false
		}
	}
	return segs, true
}
