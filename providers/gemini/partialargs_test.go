package gemini

import (
	"testing"
)

func TestArgTree(t *testing.T) {
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	yes := true
	null := "NULL_VALUE"
	tests := []struct {
		name    string
		initial string
		args    []wirePartialArg
		want    string
	}{{
		name: "string pieces joined while willContinue",
		args: []wirePartialArg{
			{JSONPath: "$.city", StringValue: s("San "), WillContinue: true},
			{JSONPath: "$.city", StringValue: s("Fran"), WillContinue: true},
			{JSONPath: "$.city", StringValue: s("cisco")},
		},
		want: `{"city":"San Francisco"}`,
	}, {
		name: "a new value after the last piece replaces the string",
		args: []wirePartialArg{
			{JSONPath: "$.a", StringValue: s("x")},
			{JSONPath: "$.a", StringValue: s("y")},
		},
		want: `{"a":"y"}`,
	}, {
		name: "nested objects, arrays, scalars, in arrival order",
		args: []wirePartialArg{
			{JSONPath: "$.user.name", StringValue: s("Ada")},
			{JSONPath: "$.user.age", NumberValue: f(36)},
			{JSONPath: "$.items[1].qty", NumberValue: f(2.5)},
			{JSONPath: "$.items[0].qty", NumberValue: f(1)},
			{JSONPath: "$['odd.key']", BoolValue: &yes},
			{JSONPath: "$.nothing", NullValue: &null},
		},
		want: `{"user":{"name":"Ada","age":36},"items":[{"qty":1},{"qty":2.5}],"odd.key":true,"nothing":null}`,
	}, {
		name:    "initial args are kept and extended",
		initial: `{"b": 1, "a": {"x": "<&>"}}`,
		args:    []wirePartialArg{{JSONPath: "$.a.y", StringValue: s("z")}},
		want:    `{"b":1,"a":{"x":"<&>","y":"z"}}`,
	}, {
		name: "unparsable paths are ignored",
		args: []wirePartialArg{
			{JSONPath: "location", StringValue: s("x")},
			{JSONPath: "$.a[", StringValue: s("x")},
			{JSONPath: "$.b[-1]", StringValue: s("x")},
			{JSONPath: "$.c[99999999]", StringValue: s("x")},
			{JSONPath: "$.ok", StringValue: s("yes")},
		},
		want: `{"ok":"yes"}`,
	}, {
		name: "escaping in keys and strings",
		args: []wirePartialArg{{JSONPath: `$["quote\"d"]`, StringValue: s("line\nbreak \"q\"")}},
		want: `{"quote\"d":"line\nbreak \"q\""}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := newArgTree([]byte(tc.initial))
			for _, pa := range tc.args {
				tree.apply(pa)
			}
			if got := string(tree.json()); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
