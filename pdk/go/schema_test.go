package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type address struct {
	City string `json:"city" jsonschema:"the city"`
	Zip  string `json:"zip,omitempty"`
}

type Base struct {
	ID int64 `json:"id"`
}

type everything struct {
	Base
	Name    string         `json:"name" jsonschema:"who"`
	Small   int8           `json:"small"`
	Count   uint           `json:"count,omitempty"`
	Ratio   float64        `json:"ratio,omitzero"`
	On      bool           `json:"on"`
	Tags    []string       `json:"tags,omitempty" enum:"a,b"`
	Scores  map[string]int `json:"scores,omitempty"`
	Addr    *address       `json:"addr,omitempty"`
	When    time.Time      `json:"when,omitempty"`
	Raw     []byte         `json:"raw,omitempty"`
	Any     any            `json:"any,omitempty"`
	Level   string         `json:"level,omitempty" enum:"low, high"`
	Skipped string         `json:"-"`
	NoTag   string         // no json tag: named by its Go name
	//lint:ignore U1000 an unexported field must not become a property
	private  string
	Nested   [2]address        `json:"nested,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Priority int               `json:"priority,omitempty" enum:"1,2,3"`
}

func TestDeriveSchema(t *testing.T) {
	s, err := deriveSchema(reflect.TypeFor[everything]())
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	addr := `{"type":"object","properties":{"city":{"type":"string","description":"the city"},"zip":{"type":"string"}},"required":["city"],"additionalProperties":false}`
	want := `{"type":"object","properties":{` +
		`"id":{"type":"integer"},` +
		`"name":{"type":"string","description":"who"},` +
		`"small":{"type":"integer","minimum":-128,"maximum":127},` +
		`"count":{"type":"integer","minimum":0},` +
		`"ratio":{"type":"number"},` +
		`"on":{"type":"boolean"},` +
		`"tags":{"type":["null","array"],"items":{"type":"string","enum":["a","b"]}},` +
		`"scores":{"type":"object","additionalProperties":{"type":"integer"}},` +
		`"addr":{"type":["null","object"],"properties":{"city":{"type":"string","description":"the city"},"zip":{"type":"string"}},"required":["city"],"additionalProperties":false},` +
		`"when":{"type":"string"},` +
		`"raw":{"type":"string"},` +
		`"any":{},` +
		`"level":{"type":"string","enum":["low","high"]},` +
		`"NoTag":{"type":"string"},` +
		`"nested":{"type":"array","items":` + addr + `},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"priority":{"type":"integer","enum":[1,2,3]}},` +
		`"required":["id","name","small","on","NoTag"],"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("schema:\n got %s\nwant %s", got, want)
	}
}

type recursive struct {
	Next *recursive `json:"next"`
}

func TestDeriveSchemaErrors(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[recursive](), "refers to itself"},
		{reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), "cannot be sent as JSON"},
		{reflect.TypeFor[struct {
			M map[int]string `json:"m"`
		}](), "not a string"},
		{reflect.TypeFor[struct {
			B bool `json:"b" enum:"x"`
		}](), "enum tag on a boolean"},
		{reflect.TypeFor[struct {
			N int `json:"n" enum:"1.5"`
		}](), `"1.5" is not a integer`},
	} {
		_, err := deriveSchema(c.typ)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.typ, err, c.want)
		}
	}
}
