package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"unicode/utf8"
)

// The result document is written by hand, not by encoding/json: a guest
// pays for every call's encoding, and reflection over Result, a
// MarshalJSON per content item and the compaction of each item's output
// cost a Go guest more than the rest of a small call (RATIONALE.md, "Why
// does the Go PDK write the result document by hand?"). The bytes are
// exactly encoding/json's with HTML escaping off: FuzzResultEncoding and
// FuzzParseCall compare the two.

// appendResult appends r's result document to dst.
func appendResult(dst []byte, r Result) ([]byte, error) {
	dst = append(dst, `{"content":`...)
	if r.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range r.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendContent(dst, c)
		}
		dst = append(dst, ']')
	}
	if len(r.StructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		var err error
		if dst, err = appendCompact(dst, r.StructuredContent); err != nil {
			// encoding/json's own words for a RawMessage that is not JSON.
			return nil, &json.MarshalerError{Type: reflect.TypeFor[json.RawMessage](), Err: err}
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// appendCompact appends raw without its insignificant whitespace, as
// json.Compact does, failing with json.Compact's error when raw is not
// JSON. Valid input, the usual case (a tool's own encoded output), is
// checked by jsonValid and copied in runs, without encoding/json's state
// machine.
func appendCompact(dst, raw []byte) ([]byte, error) {
	if !jsonValid(raw) {
		err := json.Compact(new(bytes.Buffer), raw)
		if err == nil { // cannot happen: jsonValid is json.Valid
			err = errors.New("pdk: invalid JSON")
		}
		return nil, err
	}
	start, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), nil
}

// appendContent appends c as Content.MarshalJSON writes it: a text item
// as {"type","text"} (text present even when empty, as MCP requires),
// other items with their non-empty fields.
func appendContent(dst []byte, c Content) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, c.Type)
	if c.Type == "text" {
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, c.Text)
		return append(dst, '}')
	}
	if c.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, c.Text)
	}
	if c.Data != "" {
		dst = append(dst, `,"data":`...)
		dst = appendString(dst, c.Data)
	}
	if c.MIMEType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = appendString(dst, c.MIMEType)
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t short), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
