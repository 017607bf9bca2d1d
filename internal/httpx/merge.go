package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MergeJSON deep-merges extra into the JSON object body and returns the new
// encoding: objects are merged key by key, recursively; any other value
// (scalar, list, null) in extra replaces the one in body; new keys are
// added. With an empty extra, body is returned unchanged. It is the last
// step of building a payload, so users can set fields the adapter does not
// know (reasoning_effort, provider routing) or override ones it does.
//
// Numbers in body keep their literal: they are decoded as json.Number, not
// float64, which would round integers above 2^53 (ids in tool arguments)
// and fail on values beyond its range.
func MergeJSON(body []byte, extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	m, err := decodeObject(body)
	if err != nil {
		return nil, fmt.Errorf("httpx: merging extra body fields: payload is not a JSON object: %w", err)
	}
	deepMerge(m, extra)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("httpx: merging extra body fields: %w", err)
	}
	return out, nil
}

// decodeObject decodes a JSON object with its numbers as json.Number,
// refusing trailing data as json.Unmarshal does.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return m, nil
}

// deepMerge merges src into dst as MergeJSON does. Nested maps from src are
// copied, never shared, so a later merge cannot modify the caller's extra.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
			fresh := map[string]any{}
			deepMerge(fresh, sv)
			dst[k] = fresh
			continue
		}
		dst[k] = v
	}
}
