package httpx

import (
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"  short \n", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij…"},
		// "é" is two bytes at 9-10: cutting at 10 would split it.
		{"abcdefghiéz", 10, "abcdefghi…"},
		{"日本語", 4, "日…"},
	} {
		got := Truncate(tt.s, tt.n)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
