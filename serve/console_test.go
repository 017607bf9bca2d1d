package serve_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// The console is served at / with a policy that lets it load its own
// files only; its files need no token (a browser cannot send one when it
// loads a page) while the API beside it still does.
func TestConsoleRouteAndHeaders(t *testing.T) {
	e := newEnv(t, serve.Options{Tokens: tokens}, scriptOf(scripted.Turn{Text: "x"}))
	for _, c := range []struct{ path, typ string }{
		{"/", "text/html; charset=utf-8"},
		{"/console/app.js", "text/javascript; charset=utf-8"},
		{"/console/app.css", "text/css; charset=utf-8"},
	} {
		r := e.must(http.StatusOK, "GET", c.path, "")
		if got := r.header.Get("Content-Type"); got != c.typ {
			t.Errorf("%s: Content-Type %q, want %q", c.path, got, c.typ)
		}
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", "object-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", c.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "*") || strings.Contains(csp, "http") {
			t.Errorf("%s: Content-Security-Policy %q allows more than the console's own files", c.path, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if r.header.Get(k) != v {
				t.Errorf("%s: %s %q, want %q", c.path, k, r.header.Get(k), v)
			}
		}
	}
	if r := e.must(http.StatusOK, "GET", "/", ""); !strings.Contains(r.raw, `<script type="module" src="console/app.js">`) {
		t.Fatalf("/ is not the console's page: %.300s", r.raw)
	}
	// The API stays behind its tokens, the catch-all too.
	for _, p := range []string{"/v1/runs", "/v1/tools", "/nope", "/console", "/index.html"} {
		if r := e.do("GET", p, ""); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401: %s", p, r.status, r.raw)
		}
	}
	// Only the console's own files, never another path.
	for _, p := range []string{"/console/nope.js", "/console/..%2Fserve.go", "/console/index.txt", "/console/console.go"} {
		if r := e.do("GET", p, ""); r.status != http.StatusNotFound || strings.Contains(r.raw, "package serve") {
			t.Errorf("GET %s: %d, want 404: %.200s", p, r.status, r.raw)
		}
	}
	if r := e.do("POST", "/", "{}"); r.status == http.StatusOK {
		t.Errorf("POST /: %d, want a refusal", r.status)
	}
}

// A server without tokens serves loopback peers only: the console too.
func TestConsoleTokenlessServesLoopbackOnly(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "x"}))
	for _, c := range []struct {
		remote string
		want   int
	}{{"127.0.0.1:5555", http.StatusOK}, {"[::1]:5555", http.StatusOK}, {"192.0.2.7:5555", http.StatusUnauthorized}, {"10.0.0.1:80", http.StatusUnauthorized}} {
		for _, p := range []string{"/", "/console/app.js"} {
			req := httptest.NewRequest("GET", "http://127.0.0.1"+p, nil)
			req.RemoteAddr = c.remote
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, req)
			if w.Code != c.want {
				t.Errorf("GET %s from %s: %d, want %d", p, c.remote, w.Code, c.want)
			}
		}
	}
	// A rebinding Host is refused before the console is reached.
	e.must(http.StatusForbidden, "GET", "/", "", "Host", "attacker.example:8080")
}

// consoleFiles reads the console's files from the source tree, checking
// the server serves each, byte for byte (so what is checked here is what
// is embedded).
func consoleFiles(t *testing.T, e *env) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("console")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, de := range ents {
		b, err := os.ReadFile(filepath.Join("console", de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		path := "/console/" + de.Name()
		if de.Name() == "index.html" {
			path = "/"
		}
		if r := e.must(http.StatusOK, "GET", path, ""); r.raw != string(b) {
			t.Fatalf("%s serves other bytes than console/%s", path, de.Name())
		}
		out[de.Name()] = string(b)
	}
	if len(out) < 4 {
		t.Fatalf("console files: %v", out)
	}
	return out
}

// The console loads nothing from elsewhere (it works offline, and the
// policy would refuse it anyway), and builds its page from data as text:
// no API that parses a string as markup or code.
func TestConsoleAssetsSelfContained(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "x"}))
	files := consoleFiles(t, e)
	external := regexp.MustCompile(`(?i)\b(https?|wss?|ftp|javascript):|\bdata:[a-z-]+/|//[a-z0-9-]+\.[a-z0-9.-]+|@import`)
	cssURL := regexp.MustCompile(`\burl\(`)
	unsafeJS := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*["'](on|style)|\.srcdoc|createContextualFragment|DOMParser`)
	inlineHTML := regexp.MustCompile(`(?i)<script>|<script[^>]*>[^<]+</script>|\son[a-z]+\s*=|\sstyle\s*=|<style`)
	for name, text := range files {
		for i, line := range strings.Split(text, "\n") {
			if m := external.FindString(line); m != "" {
				t.Errorf("console/%s:%d: %q: a URL elsewhere (the console must work offline, from its own origin): %s", name, i+1, m, line)
			}
			if m := cssURL.FindString(line); m != "" && strings.HasSuffix(name, ".css") {
				t.Errorf("console/%s:%d: %q: the style sheet loads nothing: %s", name, i+1, m, line)
			}
			if strings.HasSuffix(name, ".js") {
				if m := unsafeJS.FindString(line); m != "" {
					t.Errorf("console/%s:%d: %q: build the page with dom.js's h (text nodes), never from markup: %s", name, i+1, m, line)
				}
			}
			if strings.HasSuffix(name, ".html") {
				if m := inlineHTML.FindString(line); m != "" {
					t.Errorf("console/%s:%d: %q: inline script or style, which the policy refuses: %s", name, i+1, m, line)
				}
			}
		}
	}
	// Every file the page names is one the server has.
	ref := regexp.MustCompile(`(?:src|href)="(console/[^"]+)"|from "\./([^"]+)"`)
	for name, text := range files {
		for _, m := range ref.FindAllStringSubmatch(text, -1) {
			f := strings.TrimPrefix(m[1]+m[2], "console/")
			if _, ok := files[f]; !ok {
				t.Errorf("console/%s names %s, which is not a console file", name, f)
			}
		}
	}
}
