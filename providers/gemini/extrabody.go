package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// mergeBody deep-merges extra into the JSON object body: objects are
// merged key by key, any other value in extra replaces the one in body.
func mergeBody(body []byte, extra map[string]any) ([]byte, error) {
	// UseNumber keeps large integers in tool arguments exact.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("gemini: merging ExtraBody: %w", err)
	}
	deepMerge(m, extra)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: ExtraBody cannot be encoded: %v", ErrInvalidRequest, err)
	}
	return out, nil
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		sv, srcObj := v.(map[string]any)
		dv, dstObj := dst[k].(map[string]any)
		if srcObj && dstObj {
			deepMerge(dv, sv)
			continue
		}
		dst[k] = v
	}
}
