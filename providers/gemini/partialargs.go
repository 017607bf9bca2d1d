package gemini

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/autoagent-go/autoagent/internal/jsonpath"
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
	path, err := jsonpath.Parse(pa.JSONPath)
	if err != nil || len(path) == 0 {
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
func (n *jnode) child(seg jsonpath.Step) *jnode {
	if seg.IsKey {
		if n.fields == nil {
			*n = jnode{fields: map[string]*jnode{}}
		}
		c, ok := n.fields[seg.Key]
		if !ok {
			c = &jnode{fields: map[string]*jnode{}}
			n.fields[seg.Key] = c
			n.keys = append(n.keys, seg.Key)
		}
		return c
	}
	if !n.isArr {
		*n = jnode{isArr: true}
	}
	for len(n.elems) <= seg.Index {
		n.elems = append(n.elems, &jnode{fields: map[string]*jnode{}})
	}
	return n.elems[seg.Index]
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
