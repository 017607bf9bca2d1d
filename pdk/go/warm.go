package pdk

import (
	"encoding/json"
	"reflect"
)

// A module's instances may start from a snapshot the host takes after
// the module's initialisation (Module.SharedSeeds for Go guests), and then
// every call is the first one its instance makes: what encoding/json
// learns of a type at its first use (the fields, their decoders and
// encoders) it would learn again in every call. So the kit teaches it the
// types it will meet while the module initialises, with no caller's data:
// the call envelope and results here, each tool's argument and result
// types in NewTool (warmTypes). No code of the tool's runs for it.
func init() {
	_, _, _ = parseCall([]byte(`{"params":{"name":"warm","arguments":{}}}`))
	_, _ = marshal(Result{Content: []Content{{Type: "text", Text: "warm"}}, StructuredContent: json.RawMessage(`{}`)})
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]() // textUnmarshaler: schema.go

// warmTypes makes encoding/json learn In and Out: it decodes {} into a
// new In (unless In decodes itself: that would run the tool's code), and
// encodes a nil *Out, which builds Out's encoder and calls no method.
func warmTypes[In, Out any]() {
	defer func() { _ = recover() }() // a warm-up never fails a module
	in := reflect.TypeFor[In]()
	if !in.Implements(jsonUnmarshaler) && !reflect.PointerTo(in).Implements(jsonUnmarshaler) &&
		!in.Implements(textUnmarshaler) && !reflect.PointerTo(in).Implements(textUnmarshaler) {
		var v In
		_ = json.Unmarshal([]byte("{}"), &v)
	}
	_, _ = json.Marshal((*Out)(nil))
}
