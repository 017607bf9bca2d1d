package httpx

import (
	"encoding/json"
	"fmt"
)

// MergeJSON deep-merges extra into the JSON object body and returns the new
// encoding: objects are merged key by key, recursively; any other value
// (scalar, list, null) in extra replaces the one in body; new keys are
// added. With an empty extra, body is returned unchanged. It is the last
// step of building a payload, so users can set fields the adapter does not
// know (reasoning_effort, provider routing) or override ones it does.
func MergeJSON(body []byte, extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("httpx: merging extra body fields: payload is not a JSON object: %w", err)
	}
	DeepMerge(m, extra)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("httpx: merging extra body fields: %w", err)
	}
	return out, nil
}

// DeepMerge merges src into dst as MergeJSON does. Nested maps from src are
// copied, never shared, so a later merge cannot modify the caller's extra.
func DeepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				DeepMerge(dv, sv)
				continue
			}
			fresh := map[string]any{}
			DeepMerge(fresh, sv)
			dst[k] = fresh
			continue
		}
		dst[k] = v
	}
}
