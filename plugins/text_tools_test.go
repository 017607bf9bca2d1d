package plugins_test

import (
	"fmt"
	"strings"
	"testing"
)

func TestJSONQuery(t *testing.T) {
	l := newEnv(t).mustLoad("text_tools")
	doc := `{"items":[{"name":"apple","price":1.25},{"name":"pear","price":2}],"key with space":{"x":[1,2,3]},"n":12345678901234567890}`
	for _, c := range []struct{ query, want string }{
		{".items[0].name", `"apple"`},
		{".items[-1].price", `2`},
		{".items[*].name", `["apple","pear"]`},
		{`["key with space"].x[1]`, `2`},
		{".n", `12345678901234567890`}, // big numbers stay exact
		{"", doc},
		{".items[*]", `[{"name":"apple","price":1.25},{"name":"pear","price":2}]`},
	} {
		got := ok(t, l, "json_query", fmt.Sprintf(`{"json":%q,"query":%q}`, doc, c.query)).Text()
		if got != c.want {
			t.Errorf("query %q = %s, want %s", c.query, got, c.want)
		}
	}
	fails(t, l, "json_query", fmt.Sprintf(`{"json":%q,"query":".items[5]"}`, doc), "2 elements", "out of range")
	fails(t, l, "json_query", fmt.Sprintf(`{"json":%q,"query":".nope"}`, doc), `no key "nope"`, "items")
	fails(t, l, "json_query", fmt.Sprintf(`{"json":%q,"query":".items.name"}`, doc), "not an object")
	fails(t, l, "json_query", `{"json":"{broken","query":".a"}`, "not valid JSON")
	fails(t, l, "json_query", fmt.Sprintf(`{"json":%q,"query":"items"}`, doc), "segments start with")
}

func TestRegex(t *testing.T) {
	l := newEnv(t).mustLoad("text_tools")
	res := ok(t, l, "regex", `{"pattern":"(?P<user>\\w+)@(\\w+)\\.com","text":"mail ann@example.com or bob@test.com"}`)
	var out struct {
		Matched bool
		Count   int
		Matches []struct {
			Text   string
			Start  int
			Groups []string
			Named  map[string]string
		}
	}
	structured(t, res, &out)
	if out.Count != 2 || out.Matches[1].Text != "bob@test.com" || out.Matches[1].Start != 24 ||
		strings.Join(out.Matches[0].Groups, ",") != "ann,example" || out.Matches[0].Named["user"] != "ann" {
		t.Errorf("find = %+v", out)
	}
	if got := ok(t, l, "regex", `{"pattern":"(\\d+)-(\\d+)","text":"1-2 and 30-40","mode":"replace","replacement":"$2..$1"}`).Text(); got != "2..1 and 40..30" {
		t.Errorf("replace = %q", got)
	}
	if got := ok(t, l, "regex", `{"pattern":"a","text":"aaaa","mode":"replace","replacement":"b","max":2}`).Text(); got != "bbaa" {
		t.Errorf("replace with max = %q", got)
	}
	if got := ok(t, l, "regex", `{"pattern":"\\s*,\\s*","text":"a , b,c","mode":"split"}`).Text(); got != "\"a\"\n\"b\"\n\"c\"" {
		t.Errorf("split = %q", got)
	}
	if got := ok(t, l, "regex", `{"pattern":"^\\d+$","text":"12a","mode":"match"}`).Text(); got != "false" {
		t.Errorf("match = %q", got)
	}
	fails(t, l, "regex", `{"pattern":"(unclosed","text":"x"}`, "pattern", "missing closing )")
	fails(t, l, "regex", `{"pattern":"a","text":"x","mode":"grep"}`, "mode")
}

func TestCalc(t *testing.T) {
	l := newEnv(t).mustLoad("text_tools")
	for _, c := range []struct{ expr, want string }{
		{"1 + 2 * 3", "7"},
		{"(1 + 2) * 3", "9"},
		{"2 ^ 3 ^ 2", "512"}, // right-associative
		{"-2 ^ 2", "-4"},     // power binds tighter than unary minus
		{"2 ** 10", "1024"},
		{"10 % 4 + 7 / 2", "5.5"},
		{"sqrt(16) + abs(-3) + max(1, 9, 4) + min(2, -1)", "15"},
		{"round(2.5) + floor(-1.5) + ceil(1.2)", "3"},
		{"2 * pi", "6.283185307179586"},
		{"1.5e3 + .5", "1500.5"},
		{"ln(e)", "1"},
	} {
		res := ok(t, l, "calc", fmt.Sprintf(`{"expression":%q}`, c.expr))
		if got := res.Text(); got != `{"value":`+c.want+`}` {
			t.Errorf("calc(%s) = %s, want value %s", c.expr, got, c.want)
		}
	}
	fails(t, l, "calc", `{"expression":"1 / 0"}`, "division by zero")
	fails(t, l, "calc", `{"expression":"2 + foo"}`, `unknown name "foo"`, "position 5")
	fails(t, l, "calc", `{"expression":"(1 + 2"}`, "missing )")
	fails(t, l, "calc", `{"expression":"1 2"}`, `unexpected "2"`)
	fails(t, l, "calc", `{"expression":"sqrt(-1)"}`, "not a finite number")
	fails(t, l, "calc", `{"expression":"sqrt(1, 2)"}`, "takes 1 argument")
}

func TestCSVStats(t *testing.T) {
	l := newEnv(t).mustLoad("text_tools")
	csv := "name,age,city\nann,31,Oslo\nbob,,\"Rio, BR\"\ncid,29.5,Oslo\n"
	res := ok(t, l, "csv_stats", fmt.Sprintf(`{"csv":%q}`, csv))
	var out struct {
		Rows    int
		Columns []struct {
			Name                             string
			Filled, Empty, Distinct, Numeric int
			Min, Max, Mean, Sum              *float64
		}
	}
	structured(t, res, &out)
	if out.Rows != 3 || len(out.Columns) != 3 {
		t.Fatalf("csv_stats = %+v", out)
	}
	age, city := out.Columns[1], out.Columns[2]
	if age.Name != "age" || age.Filled != 2 || age.Empty != 1 || age.Numeric != 2 || *age.Min != 29.5 || *age.Max != 31 || *age.Mean != 30.25 || *age.Sum != 60.5 {
		t.Errorf("age = %+v", age)
	}
	if city.Distinct != 2 || city.Numeric != 0 || city.Min != nil {
		t.Errorf("city = %+v", city)
	}
	if !strings.Contains(res.Text(), "3 rows, 3 columns") || !strings.Contains(res.Text(), "age: 2 filled, 1 empty, 2 distinct, 2 numeric: min 29.5, max 31, mean 30.25, sum 60.5") {
		t.Errorf("text = %q", res.Text())
	}
	structured(t, ok(t, l, "csv_stats", `{"csv":"1;2\n3;4\n","delimiter":";","no_header":true}`), &out)
	if out.Rows != 2 || out.Columns[1].Name != "2" || *out.Columns[1].Sum != 6 {
		t.Errorf("no_header with ; = %+v", out)
	}
	fails(t, l, "csv_stats", `{"csv":"a,b\n\"unclosed,1\n"}`, "csv")
	fails(t, l, "csv_stats", `{"csv":"a","delimiter":"::"}`, "one character")
}
