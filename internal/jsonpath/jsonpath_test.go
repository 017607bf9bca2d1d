package jsonpath

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		path string
		want []Step
	}{
		{"$", nil},
		{"$.a.b", []Step{{Key: "a", IsKey: true}, {Key: "b", IsKey: true}}},
		{"$.items[2].name", []Step{{Key: "items", IsKey: true}, {Index: 2}, {Key: "name", IsKey: true}}},
		{`$['unit price']["a\"b"]`, []Step{{Key: "unit price", IsKey: true}, {Key: `a"b`, IsKey: true}}},
		{"$[0][65536]", []Step{{Index: 0}, {Index: MaxIndex}}},
	} {
		got, err := Parse(tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.path, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ path, want string }{
		{"a.b", `starts with "$"`},
		{"$..a", "empty key"},
		{"$[1", "unclosed ["},
		{"$['a", "unclosed quoted key"},
		{"$[-1]", "not a number"},
		{"$[65537]", "not a number"},
		{"$x", "unexpected"},
	} {
		if _, err := Parse(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q): %v, want an error saying %q", tt.path, err, tt.want)
		}
	}
}
