package main

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"node server.js stdio", []string{"node", "server.js", "stdio"}},
		{"  a   b\tc\n", []string{"a", "b", "c"}},
		{`'/path with spaces/node' -e 'a "b" \c'`, []string{"/path with spaces/node", "-e", `a "b" \c`}},
		{`"x \"y\" \\ \$HOME \n"`, []string{`x "y" \ $HOME \n`}},
		{`a\ b c\\d`, []string{"a b", `c\d`}},
		{`'' ""`, []string{"", ""}},
		{`pre'mid'"post"`, []string{"premidpost"}},
		{"", nil},
	} {
		got, err := splitCommand(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`'open`, `"open`, `a "b`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("splitCommand(%q) accepted an unterminated quote", bad)
		}
	}
}
