package cache_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// keyFields are the fields of the request's types that Key writes. A
// field package llm gains fails TestKeyCoversEveryField until Key
// writes it and it is listed here: a request differing only in it would
// otherwise hit another request's answer.
var keyFields = map[reflect.Type][]string{
	reflect.TypeFor[llm.Request]():        {"Model", "Messages", "Tools", "ToolChoice", "Temperature", "MaxTokens", "ResponseFormat"},
	reflect.TypeFor[llm.Message]():        {"Role", "Parts"},
	reflect.TypeFor[llm.Part]():           {"Type", "Text", "Image", "ToolCall", "ToolResult", "Signature", "Redacted"},
	reflect.TypeFor[llm.Image]():          {"MIMEType", "Data", "URL"},
	reflect.TypeFor[llm.ToolCall]():       {"ID", "Name", "Arguments"},
	reflect.TypeFor[llm.ToolResult]():     {"CallID", "Name", "Content", "IsError", "Refusal", "Untrusted"},
	reflect.TypeFor[llm.ToolSpec]():       {"Name", "Description", "InputSchema", "OutputSchema"},
	reflect.TypeFor[llm.ToolChoice]():     {"Mode", "Name"},
	reflect.TypeFor[llm.ResponseFormat](): {"Type", "Name", "Description", "Schema", "Strict"},
}

func TestKeyCoversEveryField(t *testing.T) {
	for typ, want := range keyFields {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want))
		if !slices.Equal(got, w) {
			t.Errorf("llm.%s has fields %v; the cache key writes %v: write the new ones in Key (key.go) and list them here", typ.Name(), got, w)
		}
	}
}
