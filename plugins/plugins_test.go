package plugins_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDescriptions checks what a model reads: every tool and every
// argument has a description, and each module is small enough to keep in
// the repository.
func TestDescriptions(t *testing.T) {
	e := newEnv(t)
	want := map[string][]string{
		"http_get":   {"http_get"},
		"read_file":  {"read_file", "list_dir"},
		"write_file": {"write_file"},
		"kv":         {"kv_get", "kv_set", "kv_delete", "kv_list"},
		"text_tools": {"json_query", "regex", "calc", "csv_stats"},
	}
	for module, tools := range want {
		fi, err := os.Stat(module + ".wasm")
		if err != nil {
			t.Fatalf("%v (run `make plugins`)", err)
		}
		if fi.Size() > 6<<20 {
			t.Errorf("%s.wasm is %d bytes: built without -ldflags=-s -w?", module, fi.Size())
		}
		l, err := e.load(module, nil, "kv:plugins-test", "net:127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, td := range l.Describe().Tools {
			got = append(got, td.Name)
			if len(td.Description) < 40 {
				t.Errorf("%s: description too short for a model: %q", td.Name, td.Description)
			}
			var schema struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(td.InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			for name, p := range schema.Properties {
				if p.Description == "" {
					t.Errorf("%s: argument %s has no description", td.Name, name)
				}
			}
		}
		if diff := cmp.Diff(tools, got); diff != "" {
			t.Errorf("%s tools (-want +got):\n%s", module, diff)
		}
	}
}

func TestHTTPGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hello":
			fmt.Fprint(w, "héllo from the test server")
		case "/accept":
			fmt.Fprint(w, r.Header.Get("Accept"))
		case "/big":
			fmt.Fprint(w, strings.Repeat("é", 100)) // 200 bytes
		case "/binary":
			w.Write([]byte{0xff, 0xfe, 0x00, 0x01})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	e := newEnv(t)

	// Without a net grant it loads, and its request is refused.
	fails(t, e.mustLoad("http_get"), "http_get", fmt.Sprintf(`{"url":%q}`, srv.URL+"/hello"),
		"net: call of extism:host/env.http_request refused: the module was not granted net:HOST")

	l := e.mustLoad("http_get", "net:127.0.0.1:"+port)
	res := ok(t, l, "http_get", fmt.Sprintf(`{"url":%q}`, srv.URL+"/hello"))
	var out struct {
		Status    int
		Body      string
		Bytes     int
		Truncated bool
		Binary    bool
	}
	structured(t, res, &out)
	if out.Status != 200 || out.Body != "héllo from the test server" || out.Bytes != 27 || out.Truncated || out.Binary {
		t.Errorf("structured = %+v", out)
	}
	if !strings.HasPrefix(res.Text(), "HTTP 200, 27 bytes\n\nhéllo") {
		t.Errorf("text = %q", res.Text())
	}
	if res := ok(t, l, "http_get", fmt.Sprintf(`{"url":%q,"headers":{"Accept":"text/csv"}}`, srv.URL+"/accept")); !strings.HasSuffix(res.Text(), "\n\ntext/csv") {
		t.Errorf("headers not sent: %q", res.Text())
	}
	res = ok(t, l, "http_get", fmt.Sprintf(`{"url":%q,"max_bytes":7}`, srv.URL+"/big"))
	structured(t, res, &out)
	if out.Body != "ééé" || !out.Truncated || out.Bytes != 200 {
		t.Errorf("truncation: %+v (want 3 whole characters of 200 bytes)", out)
	}
	res = ok(t, l, "http_get", fmt.Sprintf(`{"url":%q}`, srv.URL+"/binary"))
	if structured(t, res, &out); !out.Binary || out.Body != "" {
		t.Errorf("binary body shown: %+v", out)
	}
	fails(t, l, "http_get", fmt.Sprintf(`{"url":%q}`, srv.URL+"/missing"), "HTTP 404")
	fails(t, l, "http_get", `{"url":"ftp://example.com/x"}`, "not an absolute http")
	// A host that was not granted is refused by the host, whatever the module does.
	fails(t, l, "http_get", `{"url":"http://127.0.0.2:1/"}`, "refused")
}

func TestReadFileAndListDir(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("line one\nline two\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 0xff, 0xfe}, 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "deep.txt"), []byte("deep"), 0o644))
	outside := filepath.Join(t.TempDir(), "secret.txt")
	must(t, os.WriteFile(outside, []byte("secret"), 0o644))
	e := newEnv(t)

	// Without a grant the file system is empty.
	bare := e.mustLoad("read_file")
	fails(t, bare, "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt")), "outside the directories granted")

	l := e.mustLoad("read_file", "fs.read:"+dir)
	if got := ok(t, l, "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt"))).Text(); got != "line one\nline two\n" {
		t.Errorf("read_file = %q", got)
	}
	res := ok(t, l, "read_file", fmt.Sprintf(`{"path":%q,"offset":5,"max_bytes":3}`, filepath.Join(dir, "notes.txt")))
	var rd struct {
		Content   string
		Size      int64
		Truncated bool
	}
	structured(t, res, &rd)
	if rd.Content != "one" || rd.Size != 18 || !rd.Truncated || !strings.Contains(res.Text(), "offset 8") {
		t.Errorf("partial read: %+v %q", rd, res.Text())
	}
	fails(t, l, "read_file", fmt.Sprintf(`{"path":%q}`, outside), "outside the directories granted")
	fails(t, l, "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "blob.bin")), "binary")
	fails(t, l, "read_file", fmt.Sprintf(`{"path":%q}`, dir), "use list_dir")
	fails(t, l, "read_file", `{"path":"notes.txt"}`, "not absolute")
	fails(t, l, "read_file", `{}`, "path", "required")

	var ls struct {
		Entries []struct {
			Path string
			Type string
			Size int64
		}
	}
	structured(t, ok(t, l, "list_dir", fmt.Sprintf(`{"path":%q}`, dir)), &ls)
	got := fmt.Sprint(ls.Entries)
	if want := "[{blob.bin file 3} {notes.txt file 18} {sub dir 0}]"; got != want {
		t.Errorf("list_dir = %s, want %s", got, want)
	}
	structured(t, ok(t, l, "list_dir", fmt.Sprintf(`{"path":%q,"recursive":true}`, dir)), &ls)
	if got := len(ls.Entries); got != 4 || ls.Entries[3].Path != filepath.Join("sub", "deep.txt") {
		t.Errorf("recursive list_dir = %+v", ls.Entries)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	e := newEnv(t)

	// Read-only access is not enough: the write is refused and nothing changes.
	ro := e.mustLoad("write_file", "fs.read:"+dir)
	fails(t, ro, "write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, target))
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a write without fs.write created %s", target)
	}

	l := e.mustLoad("write_file", "fs.write:"+dir)
	ok(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":"hello "}`, target))
	res := ok(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":"world","append":true}`, target))
	if b, _ := os.ReadFile(target); string(b) != "hello world" {
		t.Errorf("file holds %q", b)
	}
	if res.Text() != "wrote 5 bytes to "+target+" (now 11 bytes)" {
		t.Errorf("text = %q", res.Text())
	}
	nested := filepath.Join(dir, "a", "b", "c.txt")
	fails(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, nested), "create_dirs")
	ok(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":"x","create_dirs":true}`, nested))
	fails(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, filepath.Join(t.TempDir(), "elsewhere.txt")))

	// The size cap: 1 MiB by default, lower when the operator configures it.
	capped, err := e.load("write_file", map[string]string{"WRITE_FILE_MAX_BYTES": "4"}, "fs.write:"+dir)
	must(t, err)
	fails(t, capped, "write_file", fmt.Sprintf(`{"path":%q,"content":"12345"}`, target), "5 bytes", "4 bytes")
	big := strings.Repeat("x", 1<<20+1)
	fails(t, l, "write_file", fmt.Sprintf(`{"path":%q,"content":%q}`, target, big), "1048576 bytes")
	if b, _ := os.ReadFile(target); string(b) != "hello world" {
		t.Errorf("a refused write changed the file: %q", b)
	}
}

func TestKV(t *testing.T) {
	e := newEnv(t)
	// Without a kv grant it loads, and its store is refused.
	fails(t, e.mustLoad("kv"), "kv_get", `{"key":"colour"}`,
		"kv: call of extism:host/user.kv_get refused: the module was not granted kv:NAMESPACE")
	l := e.mustLoad("kv", "kv:notes")
	res := ok(t, l, "kv_get", `{"key":"colour"}`)
	var got struct {
		Found bool
		Value string
	}
	if structured(t, res, &got); got.Found {
		t.Errorf("empty store has colour: %+v", got)
	}
	ok(t, l, "kv_set", `{"key":"colour","value":"blue ünïcode"}`)
	ok(t, l, "kv_set", `{"key":"city","value":"Oslo"}`)
	ok(t, l, "kv_set", `{"key":"other","value":"x"}`)

	// A fresh load (a new run) sees what the last one stored.
	again := e.mustLoad("kv", "kv:notes")
	if v := ok(t, again, "kv_get", `{"key":"colour"}`).Text(); v != "blue ünïcode" {
		t.Errorf("kv_get after reload = %q", v)
	}
	var keys struct{ Keys []string }
	structured(t, ok(t, again, "kv_list", `{"prefix":"c"}`), &keys)
	if diff := cmp.Diff([]string{"city", "colour"}, keys.Keys); diff != "" {
		t.Errorf("kv_list (-want +got):\n%s", diff)
	}
	ok(t, again, "kv_delete", `{"key":"colour"}`)
	if structured(t, ok(t, again, "kv_get", `{"key":"colour"}`), &got); got.Found {
		t.Error("kv_delete left the key")
	}
	fails(t, again, "kv_set", `{"key":"","value":"x"}`, "1 to 512 bytes")

	// Another namespace is another store.
	other := e.mustLoad("kv", "kv:other-ns")
	if structured(t, ok(t, other, "kv_get", `{"key":"city"}`), &got); got.Found {
		t.Error("namespaces share keys")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
