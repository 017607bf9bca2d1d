package pdk

import (
	"context"
	"encoding/json"
	"testing"
)

// selfDecoding and selfEncoding count their JSON methods' runs: the tool's
// own code, which the warm-up must never run.
type selfDecoding struct {
	N int `json:"n"`
}

var decodes, encodes int

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	decodes++
	var v struct {
		N int `json:"n"`
	}
	err := json.Unmarshal(b, &v)
	s.N = v.N
	return err
}

type selfEncoding struct{ N int }

func (s selfEncoding) MarshalJSON() ([]byte, error) {
	encodes++
	return json.Marshal(s.N)
}

type wrapped struct {
	Inner selfEncoding `json:"inner"`
}

// The warm-up at NewTool runs none of the tool's code: not a type's JSON
// methods, not its function; the first call then runs them as usual.
func TestWarmUpRunsNoToolCode(t *testing.T) {
	decodes, encodes = 0, 0
	ran := 0
	fn := func(_ context.Context, in selfDecoding) (wrapped, error) {
		ran++
		return wrapped{Inner: selfEncoding(in)}, nil
	}
	tl := NewTool("self", "decodes and encodes itself", fn)
	other := NewTool("plain", "", func(_ context.Context, in struct {
		A string `json:"a"`
	}) (selfEncoding, error) {
		ran++
		return selfEncoding{}, nil
	})
	if tl.err != nil || other.err != nil || decodes != 0 || encodes != 0 || ran != 0 {
		t.Fatalf("after NewTool: errors %v %v; decodes %d, encodes %d, runs %d: want no code of the tool run", tl.err, other.err, decodes, encodes, ran)
	}
	res := tl.run(context.Background(), []byte(`{"n":7}`))
	if res.IsError || decodes != 1 || encodes != 1 || ran != 1 || string(res.StructuredContent) != `{"inner":7}` {
		t.Fatalf("the call: %+v; decodes %d, encodes %d, runs %d", res, decodes, encodes, ran)
	}
}
