package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// decoders gives each type of this package its payload family. A
// synth_<stage> type is a [Synth]; any other type decodes as [Fields].
var decoders = map[Type]func([]byte) (Payload, error){
	RunStart:            decodeAs[Run],
	RunEnd:              decodeAs[Run],
	Cancelled:           decodeAs[Run],
	MaxStepsExceeded:    decodeAs[Run],
	TokenBudgetExceeded: decodeAs[Run],
	Checkpoint:          decodeAs[Run],

	LLMRequest:  decodeAs[ModelCall],
	LLMResponse: decodeAs[ModelCall],
	CacheHit:    decodeAs[ModelCall],
	CacheMiss:   decodeAs[ModelCall],

	ToolCallStart:          decodeAs[ToolCall],
	ToolCallEnd:            decodeAs[ToolCall],
	ToolCallEarlyStart:     decodeAs[ToolCall],
	ToolCallEarlyDiscarded: decodeAs[ToolCall],
	OutcomeUnknown:         decodeAs[ToolCall],
	JournalReplay:          decodeAs[ToolCall],
	NestedReplay:           decodeAs[ToolCall],
	NestedDiverged:         decodeAs[ToolCall],
	ResultTruncated:        decodeAs[ToolCall],
	Tainted:                decodeAs[ToolCall],

	PolicyDeny:               decodeAs[Guard],
	ApprovalRequired:         decodeAs[Guard],
	ApprovalDecision:         decodeAs[Guard],
	ApprovalMismatch:         decodeAs[Guard],
	LoopGuardBlock:           decodeAs[Guard],
	LoopGuardWouldBlock:      decodeAs[Guard],
	TrifectaBlock:            decodeAs[Guard],
	TrifectaWouldBlock:       decodeAs[Guard],
	TrifectaApprovalRequired: decodeAs[Guard],
	ToolsDisabled:            decodeAs[Guard],
	Guardrail:                decodeAs[Guard],

	ToolHook:       decodeAs[Hook],
	HookInvoked:    decodeAs[Hook],
	HookCorrection: decodeAs[Hook],
	HookError:      decodeAs[Hook],

	ContextBudget:   decodeAs[Memory],
	ContextPruned:   decodeAs[Memory],
	MemoryCompacted: decodeAs[Memory],
	MemoryError:     decodeAs[Memory],
	Retrieved:       decodeAs[Memory],

	SandboxCall: decodeAs[Sandbox],
}

// decodePayload reads the payload of an event of type t.
func decodePayload(t Type, raw []byte) (Payload, error) {
	if dec, ok := decoders[t]; ok {
		return dec(raw)
	}
	if strings.HasPrefix(string(t), synthPrefix) {
		return decodeAs[Synth](raw)
	}
	return decodeFields(raw)
}

// decodeAs reads raw into the family P; a missing or null payload is P's
// zero value. Keys P does not have are ignored.
func decodeAs[P Payload](raw []byte) (Payload, error) {
	var p P
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// decodeFields reads the payload of a type of no family, every field kept
// (numbers as json.Number); a missing or null payload is nil.
func decodeFields(raw []byte) (Payload, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var f Fields
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	return f, nil
}

// UnmarshalJSON reads one line of a trace file, of either format (see the
// package doc): the payload is decoded as the family of the event's type,
// or as [Fields] when the type is not one of this package's.
func (ev *Event) UnmarshalJSON(b []byte) error {
	var env struct {
		Type     Type            `json:"type"`
		SpanID   string          `json:"span_id"`
		ParentID string          `json:"parent_id"`
		RunID    string          `json:"run_id"`
		Time     time.Time       `json:"ts"`
		Payload  json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	p, err := decodePayload(env.Type, env.Payload)
	if err != nil {
		return fmt.Errorf("trace: the payload of a %q event: %w", env.Type, err)
	}
	*ev = Event{Type: env.Type, SpanID: env.SpanID, ParentID: env.ParentID, RunID: env.RunID, Time: env.Time, Payload: p}
	return nil
}

// The families whose JSON nests "attrs" read it through a copy of their
// fields without methods.
type (
	plainGuard Guard
	plainSynth Synth
)

// UnmarshalJSON reads the payload's JSON form.
func (p *Guard) UnmarshalJSON(b []byte) error {
	*p = Guard{}
	v := struct {
		*plainGuard
		Attrs struct {
			Stage string `json:"stage"`
			Tool  string `json:"tool"`
		} `json:"attrs"`
	}{plainGuard: (*plainGuard)(p)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Stage, p.Tool = v.Attrs.Stage, v.Attrs.Tool
	return nil
}

// UnmarshalJSON reads the payload's JSON form.
func (p *Synth) UnmarshalJSON(b []byte) error {
	*p = Synth{}
	v := struct {
		*plainSynth
		Attrs struct {
			Language string `json:"language"`
			SHA256   string `json:"sha256"`
		} `json:"attrs"`
	}{plainSynth: (*plainSynth)(p)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Language, p.SHA256 = v.Attrs.Language, v.Attrs.SHA256
	return nil
}

// UnmarshalJSON reads the payload's JSON form, in either format: the
// first wrote every attribute as a string (memory_peak "2097152", pooled
// "true", grants and grants_used joined by spaces, denied by "; ").
func (p *Sandbox) UnmarshalJSON(b []byte) error {
	var v struct {
		Name       string  `json:"name"`
		CallID     string  `json:"call_id"`
		Error      string  `json:"error"`
		DurationMS float64 `json:"duration_ms"`
		Attrs      struct {
			Module     string          `json:"module"`
			SHA256     string          `json:"sha256"`
			ABI        string          `json:"abi"`
			Outcome    string          `json:"outcome"`
			Grants     json.RawMessage `json:"grants"`
			GrantsUsed json.RawMessage `json:"grants_used"`
			Denied     json.RawMessage `json:"denied"`
			MemoryPeak json.RawMessage `json:"memory_peak"`
			Pooled     json.RawMessage `json:"pooled"`
		} `json:"attrs"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	a := &v.Attrs
	q := Sandbox{Name: v.Name, CallID: v.CallID, Error: v.Error, DurationMS: v.DurationMS,
		Module: a.Module, SHA256: a.SHA256, ABI: a.ABI, Outcome: a.Outcome}
	var errs [5]error
	q.Grants, errs[0] = listOf(a.Grants, " ")
	q.GrantsUsed, errs[1] = listOf(a.GrantsUsed, " ")
	q.Denied, errs[2] = listOf(a.Denied, "; ")
	q.MemoryPeak, errs[3] = int64Of(a.MemoryPeak)
	q.Pooled, errs[4] = boolOf(a.Pooled)
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("attrs.%s: %w", [...]string{"grants", "grants_used", "denied", "memory_peak", "pooled"}[i], err)
		}
	}
	*p = q
	return nil
}

// quoted returns the string raw holds, when raw is a JSON string.
func quoted(raw json.RawMessage) (string, bool, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false, nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, true, err
}

// listOf reads an array of strings, or (the first format) a string joined
// by sep; empty is nil.
func listOf(raw json.RawMessage, sep string) ([]string, error) {
	if s, ok, err := quoted(raw); ok || err != nil {
		if s == "" {
			return nil, err
		}
		return strings.Split(s, sep), err
	}
	var list []string
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	return list, nil
}

// int64Of reads a number, or (the first format) a string holding one.
func int64Of(raw json.RawMessage) (int64, error) {
	if s, ok, err := quoted(raw); ok || err != nil {
		if s == "" || err != nil {
			return 0, err
		}
		return strconv.ParseInt(s, 10, 64)
	}
	var n int64
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// boolOf reads a boolean, or (the first format) "true" or "false".
func boolOf(raw json.RawMessage) (bool, error) {
	if s, ok, err := quoted(raw); ok || err != nil {
		if s == "" || err != nil {
			return false, err
		}
		return strconv.ParseBool(s)
	}
	var v bool
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return false, err
		}
	}
	return v, nil
}
