package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildBackends builds the two first-party backend binaries into a
// directory outside any backends directory.
func buildBackends(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the backend binaries")
	}
	dir := t.TempDir()
	for _, name := range []string{"autoagent-provider-http", "autoagent-memory-sqlite"} {
		out, err := exec.Command(goTool, "build", "-o", filepath.Join(dir, name), "github.com/autoagent-go/autoagent/cmd/"+name).CombinedOutput()
		if err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}

// backendsDir lays out a backends directory as an operator would: wrapper
// scripts that give each binary its arguments, the raw binaries beside
// them, and a file that is not a backend.
func backendsDir(t *testing.T) string {
	bin := buildBackends(t)
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("autoagent-provider-openai", "#!/bin/sh\nexec "+filepath.Join(bin, "autoagent-provider-http")+" --provider openai --model gpt-4o-mini \"$@\"\n", 0o755)
	write("autoagent-memory-facts", "#!/bin/sh\nexec "+filepath.Join(bin, "autoagent-memory-sqlite")+" --db "+filepath.Join(dir, "facts.db")+" \"$@\"\n", 0o755)
	write("autoagent-provider-broken", "#!/bin/sh\necho 'broken: missing configuration' >&2\nexit 3\n", 0o755)
	write("README.txt", "not a backend", 0o644)
	return dir
}

func TestBackendsList(t *testing.T) {
	dir := backendsDir(t)
	code, stdout, stderr := backendsCLI(t, "backends", "list", "--backends", dir, "--json", "--start")
	if code != 1 {
		t.Errorf("exit %d, want 1 (one backend is broken); stderr %s", code, stderr)
	}
	var got struct {
		Dir      string          `json:"dir"`
		Backends []listedBackend `json:"backends"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	byName := make(map[string]listedBackend)
	for _, b := range got.Backends {
		byName[b.Name] = b
	}
	if len(got.Backends) != 3 {
		t.Fatalf("listed %d backends, want 3: %+v", len(got.Backends), got.Backends)
	}
	if b := byName["openai"]; b.Kind != "provider" || b.Protocol != 1 || b.Serves != "openai" || b.Error != "" {
		t.Errorf("openai: %+v", b)
	}
	if b := byName["facts"]; b.Kind != "memory" || b.Protocol != 1 || !strings.Contains(b.Serves, "sqlite") ||
		strings.Join(b.Interfaces, ",") != "remember,forget,flush" {
		t.Errorf("facts: %+v", b)
	}
	if b := byName["broken"]; b.Protocol != 0 || !strings.Contains(b.Error, "broken: missing configuration") {
		t.Errorf("broken: %+v", b)
	}

	code, stdout, _ = backendsCLI(t, "backends", "list", "--backends", dir, "--no-start")
	if code != 0 || !strings.Contains(stdout, "not started") || strings.Contains(stdout, "README") {
		t.Errorf("--no-start: exit %d\n%s", code, stdout)
	}
	t.Setenv("AUTOAGENT_BACKENDS", dir)
	if code, stdout, _ = backendsCLI(t, "backends", "list"); code != 0 || !strings.Contains(stdout, "openai") {
		t.Errorf("$AUTOAGENT_BACKENDS not used: exit %d\n%s", code, stdout)
	}
}

// backends list starts nothing unless asked, and no command searches a
// backends directory of the working directory unless it is named: a
// checkout shipping ./backends had its binaries started natively by
// `backends list` and by --provider backend:NAME (the red team of issue
// 38). Each binary here would leave a file behind if it ran.
func TestBackendsOfACheckoutNeverRun(t *testing.T) {
	checkout := t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	dir := filepath.Join(checkout, "backends")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"autoagent-provider-evil", "autoagent-memory-evil"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho ran >> "+ran+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(checkout)
	t.Setenv("AUTOAGENT_BACKENDS", "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(t.TempDir(), "config"))

	code, _, stderr := backendsCLI(t, "backends", "list")
	if code != 1 || !strings.Contains(stderr, "--backends DIR") {
		t.Errorf("backends list in a checkout: exit %d, %q", code, stderr)
	}
	code, _, stderr = backendsCLI(t, "run", "--provider", "backend:evil", "hello")
	if code == 0 || !strings.Contains(stderr, "never searched unless named") {
		t.Errorf("run --provider backend:evil in a checkout: exit %d, %q", code, stderr)
	}
	// Named, the directory is listed, and still nothing starts.
	code, stdout, _ := backendsCLI(t, "backends", "list", "--backends", "backends")
	if code != 0 || !strings.Contains(stdout, "evil") || !strings.Contains(stdout, "not started") {
		t.Errorf("backends list --backends backends: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a backend binary of the checkout ran")
	}
}

func TestBackendsListErrors(t *testing.T) {
	code, _, stderr := backendsCLI(t, "backends", "list", "--backends", filepath.Join(t.TempDir(), "absent"))
	if code != 1 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("missing dir: exit %d, %q", code, stderr)
	}
	code, stdout, _ := backendsCLI(t, "backends", "list", "--backends", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "no backends") {
		t.Errorf("empty dir: exit %d, %q", code, stdout)
	}
	if code, _, _ := backendsCLI(t, "backends", "list", "extra"); code != 2 {
		t.Errorf("extra argument: exit %d, want 2", code)
	}
	if code, _, _ := backendsCLI(t, "backends", "list", "--bogus"); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
}

// runCLI runs the CLI in process and returns its exit code and output.
func backendsCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// run --provider backend:NAME starts the provider in its own process (the
// command builds it with providers/remote and gives it to the runtime as
// Config.LLM), answers through it, and stops it on the way out.
func TestRunWithABackendProvider(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k3y" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"r1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"From the backend."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`)
	}))
	defer srv.Close()
	bin := buildBackends(t)
	dir := t.TempDir()
	wrapper := "#!/bin/sh\nFAKE_KEY=k3y exec " + filepath.Join(bin, "autoagent-provider-http") +
		" --provider openai-compatible --model m --base-url " + srv.URL + " --api-key-env FAKE_KEY --max-retries -1 \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "autoagent-provider-fake"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // no ./plugins
	code, stdout, stderr := backendsCLI(t, "run", "--provider", "backend:fake", "--backends", dir, "hi")
	if code != 0 || strings.TrimSpace(stdout) != "From the backend." {
		t.Errorf("run --provider backend:fake: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
