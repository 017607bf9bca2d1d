package httpx

import (
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	const def = "https://api.example.com/v1"
	for _, tt := range []struct{ raw, want string }{
		{"", def},
		{"http://localhost:8080/v1/", "http://localhost:8080/v1"},
		{"https://gw.example.com//", "https://gw.example.com"},
	} {
		if got, err := BaseURL("p", tt.raw, def); got != tt.want || err != nil {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
	for _, raw := range []string{"localhost:8080", "ftp://x", "no-scheme", "https://", "http://%zz"} {
		_, err := BaseURL("p", raw, def)
		if err == nil || !strings.HasPrefix(err.Error(), "p: BaseURL") || !strings.Contains(err.Error(), raw) {
			t.Errorf("BaseURL(%q) err = %v, want one naming the provider and the value", raw, err)
		}
	}
}
