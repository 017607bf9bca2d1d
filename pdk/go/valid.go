package pdk

// jsonValid reports whether doc is one JSON value, exactly as json.Valid
// does: whitespace around it, bytes of 0x80 and above inside strings as
// they are (no UTF-8 check), at most 10 000 nested arrays and objects.
// json.Valid runs a state machine with an indirect call per byte, which a
// Go guest compiled to WebAssembly pays dearly for on every call;
// FuzzJSONValid compares the two. It does not recurse: a Go guest's calls
// are the engine's, and some engines (V8) allow fewer than 10 000 frames.
func jsonValid(doc []byte) bool {
	p := validityScan{doc: doc}
	var buf [64]byte
	open := buf[:0] // the '{' or '[' of each container not yet closed
	i := p.ws(0)
	for {
		// A value starts at i.
		if i >= len(doc) {
			return false
		}
		var ok bool
		switch c := doc[i]; {
		case c == '{' || c == '[':
			if len(open) == maxDepth {
				return false
			}
			if i = p.ws(i + 1); i < len(doc) && doc[i] == c+2 { // '}' or ']'
				i, ok = i+1, true
				break
			}
			open = append(open, c)
			if c == '{' {
				if i, ok = p.key(i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			i, ok = p.str(i)
		case c == 't':
			i, ok = p.literal(i, "true")
		case c == 'f':
			i, ok = p.literal(i, "false")
		case c == 'n':
			i, ok = p.literal(i, "null")
		case c == '-' || c >= '0' && c <= '9':
			i, ok = p.number(i)
		}
		if !ok {
			return false
		}
		// After a value: close the containers that end here, then a comma
		// and the next value, or the end of the document.
		for {
			i = p.ws(i)
			if len(open) == 0 {
				return i == len(doc)
			}
			if i >= len(doc) {
				return false
			}
			top := open[len(open)-1]
			if doc[i] == top+2 {
				open, i = open[:len(open)-1], i+1
				continue
			}
			if doc[i] != ',' {
				return false
			}
			if i = p.ws(i + 1); top == '{' {
				if i, ok = p.key(i); !ok {
					return false
				}
			}
			break
		}
	}
}

// maxDepth is encoding/json's bound on nesting.
const maxDepth = 10000

type validityScan struct{ doc []byte }

// key returns where the value of the member whose key is at i starts.
func (p *validityScan) key(i int) (int, bool) {
	if i >= len(p.doc) || p.doc[i] != '"' {
		return i, false
	}
	i, ok := p.str(i)
	if !ok {
		return i, false
	}
	if i = p.ws(i); i >= len(p.doc) || p.doc[i] != ':' {
		return i, false
	}
	return p.ws(i + 1), true
}

func (p *validityScan) ws(i int) int {
	for i < len(p.doc) {
		switch p.doc[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the index after the string at i.
func (p *validityScan) str(i int) (int, bool) {
	for i++; i < len(p.doc); {
		c := p.doc[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c != '\\':
			i++
			continue
		}
		if i++; i >= len(p.doc) {
			return i, false
		}
		switch p.doc[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			for k := 1; k <= 4; k++ {
				if i+k >= len(p.doc) || !isHex(p.doc[i+k]) {
					return i, false
				}
			}
			i += 5
		default:
			return i, false
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (p *validityScan) literal(i int, word string) (int, bool) {
	if len(p.doc)-i < len(word) || string(p.doc[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// number returns the index after the number at i:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *validityScan) number(i int) (int, bool) {
	if p.doc[i] == '-' {
		i++
	}
	switch {
	case i < len(p.doc) && p.doc[i] == '0':
		i++
	case i < len(p.doc) && p.doc[i] >= '1' && p.doc[i] <= '9':
		i = p.digits(i)
	default:
		return i, false
	}
	if i < len(p.doc) && p.doc[i] == '.' {
		if i++; i >= len(p.doc) || !isDigit(p.doc[i]) {
			return i, false
		}
		i = p.digits(i)
	}
	if i < len(p.doc) && (p.doc[i] == 'e' || p.doc[i] == 'E') {
		if i++; i < len(p.doc) && (p.doc[i] == '+' || p.doc[i] == '-') {
			i++
		}
		if i >= len(p.doc) || !isDigit(p.doc[i]) {
			return i, false
		}
		i = p.digits(i)
	}
	return i, true
}

func (p *validityScan) digits(i int) int {
	for i < len(p.doc) && isDigit(p.doc[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
