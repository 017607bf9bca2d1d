package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
	"github.com/autoagent-go/autoagent/tool"
)

// wireResult is MCP's CallToolResult as a module writes it.
type wireResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent"`
	IsError           bool              `json:"isError"`
}

type wireContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
	URI      string `json:"uri"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

// maxContentItems bounds the content items of a result. The host decodes
// each one after the guest's limits stopped counting: a 1 MiB output of
// 350 000 empty objects cost 0.5-1 s and 164 MiB of allocation unbounded
// (found by attacking our own sandbox).
const maxContentItems = 4096

// decodedResult is a module's output, decoded but not yet checked.
type decodedResult struct {
	content    []wireContent
	hasContent bool // "content" was an array, possibly empty
	structured []byte
	isError    bool
}

// parseResult decodes a module's output into a tool.Result, checking the
// structured content against the tool's output schema when it has one.
func parseResult(out []byte, outSchema *tool.Schema) (tool.Result, error) {
	d, ok := decodeResultFast(out)
	if !ok {
		var err error
		if d, err = decodeResultSlow(out); err != nil {
			return tool.Result{}, err
		}
	}
	return d.result(outSchema)
}

// decodeResultSlow decodes with encoding/json, whose errors the model
// reads.
func decodeResultSlow(out []byte) (decodedResult, error) {
	var w wireResult
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&w); err != nil {
		if len(bytes.TrimSpace(out)) == 0 {
			return decodedResult{}, errors.New("empty output, want a JSON object {\"content\":[...]}")
		}
		return decodedResult{}, fmt.Errorf("not a JSON object {\"content\":[...]}: %v", err)
	}
	if dec.More() {
		return decodedResult{}, errors.New("trailing data after the result object")
	}
	if len(w.Content) > maxContentItems {
		return decodedResult{}, fmt.Errorf("%d content items, more than the %d a result may hold", len(w.Content), maxContentItems)
	}
	d := decodedResult{hasContent: w.Content != nil, structured: w.StructuredContent, isError: w.IsError}
	for i, raw := range w.Content {
		var c wireContent
		if err := json.Unmarshal(raw, &c); err != nil {
			return decodedResult{}, fmt.Errorf("content[%d]: %v", i, err)
		}
		d.content = append(d.content, c)
	}
	return d, nil
}

// decodeResultFast decodes a well-formed result in one pass. It declines
// (ok false) anything encoding/json might read differently or reject:
// syntax errors, values of the wrong type, duplicate keys, keys that match
// a field only case-insensitively, trailing data.
func decodeResultFast(out []byte) (d decodedResult, ok bool) {
	s := jsonvalue.NewScanner(out)
	if s.Peek() != '{' {
		return d, false
	}
	var seen [len(resultFields)]bool
	ok = s.Object(func(key []byte, verbatim bool) bool {
		i := fieldIndex(key, verbatim, resultFields[:])
		switch {
		case i < 0:
			return false
		case i == len(resultFields):
			return s.Value()
		case seen[i]:
			return false
		}
		seen[i] = true
		switch i {
		case 0:
			switch s.Peek() {
			case 'n':
				return s.Lit("null")
			case '[':
				d.hasContent = true
				return s.Array(func(int) bool {
					c, ok := scanContent(&s)
					d.content = append(d.content, c)
					return ok && len(d.content) <= maxContentItems
				})
			}
			return false
		case 1:
			start := s.Pos()
			if !s.Value() {
				return false
			}
			d.structured = out[start:s.Pos()]
			return true
		default:
			switch s.Peek() {
			case 't':
				d.isError = true
				return s.Lit("true")
			case 'f':
				return s.Lit("false")
			case 'n':
				return s.Lit("null")
			}
			return false
		}
	})
	if !ok {
		return decodedResult{}, false
	}
	s.WS()
	return d, s.Pos() == len(out)
}

// The JSON names of the fields of wireResult, wireContent and its
// resource, in the order the fast decoder numbers them.
var (
	resultFields   = [...]string{"content", "structuredContent", "isError"}
	contentFields  = [...]string{"type", "text", "data", "mimeType", "uri", "resource"}
	resourceFields = [...]string{"uri", "text"}
)

// fieldIndex returns the index of key among names, len(names) for a key
// encoding/json ignores, or -1 for one the fast path leaves to
// encoding/json: not verbatim (escaped, or not ASCII), or equal to a name
// only when case is ignored (encoding/json matches fields
// case-insensitively).
func fieldIndex(key []byte, verbatim bool, names []string) int {
	if !verbatim {
		return -1
	}
	for i, n := range names {
		if string(key) == n {
			return i
		}
		if strings.EqualFold(string(key), n) {
			return -1
		}
	}
	return len(names)
}

// content decodes one content item: an object with string fields.
func scanContent(s *jsonvalue.Scanner) (wireContent, bool) {
	var c wireContent
	if s.Peek() != '{' {
		return c, false
	}
	var seen [len(contentFields)]bool
	ok := s.Object(func(key []byte, verbatim bool) bool {
		i := fieldIndex(key, verbatim, contentFields[:])
		switch {
		case i < 0:
			return false
		case i == len(contentFields):
			return s.Value()
		case seen[i]:
			return false
		}
		seen[i] = true
		if contentFields[i] == "resource" {
			if s.Peek() == 'n' {
				return s.Lit("null")
			}
			if s.Peek() != '{' {
				return false
			}
			c.Resource = &struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			}{}
			var rseen [len(resourceFields)]bool
			return s.Object(func(key []byte, verbatim bool) bool {
				j := fieldIndex(key, verbatim, resourceFields[:])
				switch {
				case j < 0:
					return false
				case j == len(resourceFields):
					return s.Value()
				case rseen[j]:
					return false
				}
				rseen[j] = true
				return scanString(s, []*string{&c.Resource.URI, &c.Resource.Text}[j])
			})
		}
		return scanString(s, []*string{&c.Type, &c.Text, &c.Data, &c.MIMEType, &c.URI}[i])
	})
	return c, ok
}

// stringField reads a string (or null, which leaves *dst alone, as
// encoding/json does).
func scanString(s *jsonvalue.Scanner, dst *string) bool {
	switch s.Peek() {
	case '"':
		raw, verbatim, ok := s.Str()
		if ok {
			*dst = jsonvalue.Unquote(raw, verbatim)
		}
		return ok
	case 'n':
		return s.Lit("null")
	}
	return false
}

// result checks a decoded result and turns it into a tool.Result.
func (d decodedResult) result(outSchema *tool.Schema) (tool.Result, error) {
	var r tool.Result
	r.IsError = d.isError
	for i, c := range d.content {
		switch c.Type {
		case "text":
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.Text})
		case "image", "audio":
			r.Content = append(r.Content, tool.Content{Type: c.Type, Data: c.Data, MIMEType: c.MIMEType})
		case "resource":
			if c.Resource == nil {
				return tool.Result{}, fmt.Errorf("content[%d]: resource without a resource object", i)
			}
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.Resource.Text})
		case "resource_link":
			r.Content = append(r.Content, tool.Content{Type: "text", Text: c.URI})
		default:
			return tool.Result{}, fmt.Errorf("content[%d]: unsupported type %q", i, c.Type)
		}
	}
	if s := bytes.TrimSpace(d.structured); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if s[0] != '{' {
			return tool.Result{}, errors.New("structuredContent is not a JSON object")
		}
		if outSchema != nil && !r.IsError {
			if err := outSchema.Validate(s); err != nil {
				var ve *tool.ValidationError
				if errors.As(err, &ve) {
					return tool.Result{}, fmt.Errorf("structuredContent does not match the outputSchema: %s", strings.TrimPrefix(ve.Field+": "+ve.Reason, ": "))
				}
				return tool.Result{}, fmt.Errorf("structuredContent does not match the outputSchema: %v", err)
			}
		}
		r.StructuredContent = json.RawMessage(bytes.Clone(s))
	}
	if !d.hasContent && r.StructuredContent == nil {
		return tool.Result{}, errors.New("no content and no structuredContent")
	}
	if r.Content == nil {
		// MCP asks servers returning structured content to also send it as
		// text, for clients that only read content.
		r.Content = []tool.Content{{Type: "text", Text: string(r.StructuredContent)}}
	}
	return r, nil
}
