package cdp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/cdp"
)

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: `make deps` installs Debian's chromium (.ci/install.d/eval.sh), which this test drives")
	return ""
}

// The client drives a page: it reads the DOM, types, presses keys, and
// sees an error the page throws and a script its policy refuses.
func TestDrivesAPage(t *testing.T) {
	bin := chromium(t)
	// Generous: a cold browser start on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>t</title><label for=i>In</label><input id=i><p id=out></p><script>inline()</script>`))
	}))
	defer hs.Close()
	b, err := cdp.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(ctx, hs.URL); err != nil {
		t.Fatal(err)
	}
	if err := p.Eval(ctx, `document.getElementById("i").focus()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Type(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := p.Eval(ctx, `document.getElementById("i").value`, &v); err != nil || v != "hello" {
		t.Fatalf("typed: %q, %v", v, err)
	}
	if err := p.Key(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitFor(ctx, `document.activeElement !== document.getElementById("i")`); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	if err := p.WaitFor(short, `document.getElementById("out").textContent === "never"`); err == nil {
		t.Fatal("WaitFor of a false condition returned nil")
	}
	// The inline script is refused by the policy: the page reports it.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(strings.Join(p.Errors(), "\n"), "Content Security Policy") {
		if time.Now().After(deadline) {
			t.Fatalf("no CSP violation reported: %q", p.Errors())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
