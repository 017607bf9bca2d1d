package trace

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// Events are encoded by hand: reflection-based encoding/json made tracing
// cost several microseconds per event. A payload's output is byte for byte
// what encoding/json produces from its struct tags (with "attrs" nested
// where a family has them; a test holds it to that), so trace files decode
// with any JSON reader.

// MarshalJSON encodes ev as one JSON object.
func (ev Event) MarshalJSON() ([]byte, error) { return appendEvent(nil, &ev), nil }

func appendEvent(b []byte, ev *Event) []byte {
	if ev.Payload == nil {
		return append(appendEventHead(b, ev), `{}}`...)
	}
	return appendEventPayload(b, ev, ev.Payload)
}

// appendEventPayload encodes ev with the payload p in place of
// ev.Payload. Of a concrete type, p is encoded where it is: it is not
// copied to the heap as storing it in an interface would.
func appendEventPayload[P Payload](b []byte, ev *Event, p P) []byte {
	b = appendEventHead(b, ev)
	b = p.appendJSON(b)
	return append(b, '}')
}

// appendEventHead writes ev up to its payload: `{"type":…,"payload":`.
func appendEventHead(b []byte, ev *Event) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, string(ev.Type))
	b = append(b, `,"span_id":`...)
	b = appendString(b, ev.SpanID)
	if ev.ParentID != "" {
		b = append(b, `,"parent_id":`...)
		b = appendString(b, ev.ParentID)
	}
	if ev.RunID != "" {
		b = append(b, `,"run_id":`...)
		b = appendString(b, ev.RunID)
	}
	b = append(b, `,"ts":`...)
	if y := ev.Time.Year(); y < 0 || y > 9999 {
		// encoding/json refuses such times; write the zero time instead of
		// losing the event.
		b = append(b, `"0001-01-01T00:00:00Z"`...)
	} else {
		b = append(b, '"')
		b = ev.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	return append(b, `,"payload":`...)
}

// payloadWriter writes the fields of one JSON object, with commas.
type payloadWriter struct {
	b     []byte
	first bool
}

func (w *payloadWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, `":`...)
}

func (w *payloadWriter) str(k, v string) {
	if v != "" {
		w.key(k)
		w.b = appendString(w.b, v)
	}
}

func (w *payloadWriter) int(k string, v int64) {
	if v != 0 {
		w.key(k)
		w.b = strconv.AppendInt(w.b, v, 10)
	}
}

func (w *payloadWriter) bool(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

func (w *payloadWriter) float(k string, v float64) {
	if v != 0 {
		w.key(k)
		w.b = appendFloat(w.b, v)
	}
}

// The payloads write their set fields in the order of the keys of the
// first format (one struct for every event, its fields in this order), so
// a line of a loop event is byte for byte what that format wrote.

func (p Run) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.int("steps", int64(p.Steps))
	w.str("status", p.Status)
	w.str("model", p.Model)
	w.int("max_steps", int64(p.MaxSteps))
	w.int("message_count", int64(p.MessageCount))
	w.int("tool_count", int64(p.ToolCount))
	w.bool("streaming", p.Streaming)
	w.int("resumed_from_step", int64(p.ResumedFromStep))
	w.str("output_preview", p.Output)
	w.str("error", p.Error)
	w.int("input_tokens", p.InputTokens)
	w.int("output_tokens", p.OutputTokens)
	w.int("cached_tokens", p.CachedTokens)
	w.int("token_budget", p.TokenBudget)
	w.int("spent", p.Spent)
	w.bool("shadow_guards", p.ShadowGuards)
	w.int("would_block", int64(p.WouldBlock))
	w.bool("tainted", p.Tainted)
	w.int("early_tool_calls", int64(p.EarlyToolCalls))
	return append(w.b, '}')
}

func (p ModelCall) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.str("status", p.Status)
	w.int("message_count", int64(p.MessageCount))
	w.int("tool_count", int64(p.ToolCount))
	w.bool("streaming", p.Streaming)
	w.str("content_preview", p.Content)
	w.str("error", p.Error)
	w.float("duration_ms", p.DurationMS)
	w.int("tool_call_count", int64(p.ToolCallCount))
	w.bool("has_reasoning", p.HasReasoning)
	w.str("finish_reason", p.FinishReason)
	w.int("input_tokens", p.InputTokens)
	w.int("output_tokens", p.OutputTokens)
	w.int("cached_tokens", p.CachedTokens)
	return append(w.b, '}')
}

func (p ToolCall) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.str("status", p.Status)
	w.str("name", p.Name)
	w.str("call_id", p.CallID)
	w.str("arguments_preview", p.Arguments)
	w.str("content_preview", p.Content)
	w.str("error", p.Error)
	w.bool("infrastructure", p.Infrastructure)
	w.str("reason", p.Reason)
	w.float("duration_ms", p.DurationMS)
	w.int("chars", int64(p.Chars))
	w.int("limit", int64(p.Limit))
	return append(w.b, '}')
}

func (p Guard) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.str("status", p.Status)
	w.str("name", p.Name)
	w.str("call_id", p.CallID)
	w.str("reason", p.Reason)
	w.str("verdict", p.Verdict)
	if len(p.Names) > 0 {
		w.key("names")
		w.b = appendStrings(w.b, p.Names)
	}
	w.int("repeats", int64(p.Repeats))
	w.int("limit", int64(p.Limit))
	if p.Stage != "" || p.Tool != "" {
		w.key("attrs")
		a := payloadWriter{b: append(w.b, '{'), first: true}
		a.str("stage", p.Stage)
		a.str("tool", p.Tool)
		w.b = append(a.b, '}')
	}
	return append(w.b, '}')
}

func (p Hook) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.str("status", p.Status)
	w.str("name", p.Name)
	w.str("call_id", p.CallID)
	w.str("content_preview", p.Content)
	w.str("error", p.Error)
	w.str("reason", p.Reason)
	w.int("corrections", int64(p.Corrections))
	return append(w.b, '}')
}

func (p Memory) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Step))
	w.str("status", p.Status)
	w.int("message_count", int64(p.MessageCount))
	w.str("error", p.Error)
	w.int("input_tokens", p.InputTokens)
	w.int("output_tokens", p.OutputTokens)
	w.int("cached_tokens", p.CachedTokens)
	w.int("pruned", int64(p.Pruned))
	w.int("chars_saved", int64(p.CharsSaved))
	w.int("kept", int64(p.Kept))
	w.int("batch", int64(p.Batch))
	w.int("limit", int64(p.Limit))
	w.str("query", p.Query)
	if len(p.Sources) > 0 {
		w.key("sources")
		w.b = appendStrings(w.b, p.Sources)
	}
	w.int("bytes", int64(p.Bytes))
	return append(w.b, '}')
}

// appendJSON writes the attributes in key order, as the first format
// wrote its string map; since format 2, memory_peak is a number, pooled a
// boolean and the three lists are arrays.
func (p Sandbox) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.str("name", p.Name)
	w.str("call_id", p.CallID)
	w.str("error", p.Error)
	w.float("duration_ms", p.DurationMS)
	w.key("attrs")
	b = append(w.b, `{"abi":`...)
	b = appendString(b, p.ABI)
	if len(p.Denied) > 0 {
		b = append(b, `,"denied":`...)
		b = appendStrings(b, p.Denied)
	}
	b = append(b, `,"grants":`...)
	b = appendStrings(b, p.Grants)
	b = append(b, `,"grants_used":`...)
	b = appendStrings(b, p.GrantsUsed)
	b = append(b, `,"memory_peak":`...)
	b = strconv.AppendInt(b, p.MemoryPeak, 10)
	b = append(b, `,"module":`...)
	b = appendString(b, p.Module)
	b = append(b, `,"outcome":`...)
	b = appendString(b, p.Outcome)
	b = append(b, `,"pooled":`...)
	b = strconv.AppendBool(b, p.Pooled)
	b = append(b, `,"sha256":`...)
	b = appendString(b, p.SHA256)
	return append(b, '}', '}')
}

func (p Synth) appendJSON(b []byte) []byte {
	w := payloadWriter{b: append(b, '{'), first: true}
	w.int("step", int64(p.Attempt))
	w.str("status", p.Status)
	w.str("name", p.Name)
	w.str("content_preview", p.Detail)
	w.str("error", p.Error)
	w.float("duration_ms", p.DurationMS)
	w.int("input_tokens", p.InputTokens)
	w.int("output_tokens", p.OutputTokens)
	w.int("cached_tokens", p.CachedTokens)
	w.key("attrs")
	b = append(w.b, `{"language":`...)
	b = appendString(b, p.Language)
	if p.SHA256 != "" {
		b = append(b, `,"sha256":`...)
		b = appendString(b, p.SHA256)
	}
	return append(b, '}', '}')
}

// appendJSON writes the fields with their keys sorted. A value
// encoding/json cannot write (a NaN, a channel) is written as null: Emit
// never fails.
func (p Fields) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(p)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendAny(b, p[k])
	}
	return append(b, '}')
}

func appendAny(b []byte, v any) []byte {
	if s, ok := v.(string); ok {
		return appendString(b, s)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// appendStrings writes list as a JSON array; nil as [].
func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendFloat formats like encoding/json: shortest representation, 'e'
// notation outside [1e-6, 1e21), exponent without a leading zero. NaN and
// infinities (which encoding/json refuses) are written as 0.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	b = strconv.AppendFloat(b, f, fmt, -1, 64)
	if fmt == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping on: <, >, & as \u003c etc., invalid UTF-8 as \ufffd, and
// U+2028/U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
