package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
)

// realisticSecrets are secrets in the shapes they take in real traffic,
// embedded in the text around them. Each secret must disappear.
var realisticSecrets = []struct{ name, text, secret string }{
	{"openai project key", "retrying with key sk-proj-4fJq2Vb8Xk1LmN0pQrStUvWxYz123456AbC now", "sk-proj-4fJq2Vb8Xk1LmN0pQrStUvWxYz123456AbC"},
	{"anthropic key", "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcDEF", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcDEF"},
	{"deepseek key in prose", "the key sk-9c1f0e7a4b2d48e6a3f5c7b9d1e3f5a7 was rejected", "sk-9c1f0e7a4b2d48e6a3f5c7b9d1e3f5a7"},
	{"bearer header", "Authorization: Bearer ya29.a0AfB_byC7Yp-3kLmNoPqRsTuVwXyZ0123456789", "ya29.a0AfB_byC7Yp-3kLmNoPqRsTuVwXyZ0123456789"},
	{"bearer lower case", "sent header authorization: bearer abcdEFGH1234ijklMNOP", "abcdEFGH1234ijklMNOP"},
	{"bearer in prose", "use Bearer 0a1b2c3d4e5f6a7b8c9d to call", "0a1b2c3d4e5f6a7b8c9d"},
	{"basic auth header", "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l", "YWxhZGRpbjpvcGVuc2VzYW1l"},
	{"x-api-key header", "X-Api-Key: 2f9e8d7c6b5a49382716", "2f9e8d7c6b5a49382716"},
	{"x-goog-api-key header", `{"x-goog-api-key": "AIzaSyD-1234567890abcdefghijklmnopqrstu"}`, "AIzaSyD-1234567890abcdefghijklmnopqrstu"},
	{"google key alone", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"},
	{"key query parameter", "POST https://llm.example.com/v1beta/models/m:generateContent?alt=sse&key=Zx81kQp0Lm2Nb7Vc", "Zx81kQp0Lm2Nb7Vc"},
	{"api_key query parameter", "GET /v1/search?q=go&api_key=9f8e7d6c5b4a39281706 HTTP/1.1", "9f8e7d6c5b4a39281706"},
	{"signed url", "https://bucket.example.com/o?X-Goog-Expires=900&sig=Qm9iIGhhcyBhIHNlY3JldA", "Qm9iIGhhcyBhIHNlY3JldA"},
	{"json password", `{"user":"bob","password":"correct horse battery staple"}`, "correct horse battery staple"},
	{"json access token", `{"access_token":"ya29.A0ARrdaM-x9","expires_in":3599}`, "ya29.A0ARrdaM-x9"},
	{"json client secret", `{"clientSecret": "c0ffee-and-t34"}`, "c0ffee-and-t34"},
	{"json authorization", `{"headers":{"Authorization":"token 7a6b5c4d3e2f1a0b"}}`, "7a6b5c4d3e2f1a0b"},
	{"escaped json arguments", `{"arguments":"{\"api_key\":\"zz-secret-value-123\",\"q\":\"go\"}"}`, "zz-secret-value-123"},
	{"env password", "DB_PASSWORD=hunter2hunter2 ./serve", "hunter2hunter2"},
	{"groq key", "gsk_8sKx2mZ3qR7vT1wY5uP9oL4nJ6hG0fD2sA8", "gsk_8sKx2mZ3qR7vT1wY5uP9oL4nJ6hG0fD2sA8"},
	{"aws access key id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"},
	{"aws secret", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"github token", "git push https://github.example/x with ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_1234567890abcdefghijABCDEFGHIJ123456"},
	{"gitlab token", "glpat-xYz0123456789AbCdEfGh", "glpat-xYz0123456789AbCdEfGh"},
	{"slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"},
	{"hugging face token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"},
	{"stripe key", "sk_live_51HqLyjWDarjtT1zdp7dcXfZ", "sk_live_51HqLyjWDarjtT1zdp7dcXfZ"},
	{"url password", "postgres://admin:s3cr3t-P4ss@db.internal:5432/app", "s3cr3t-P4ss"},
	{"jwt", "session eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok", "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"},
	{"pem private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn"},
}

func TestRedactRealisticSecrets(t *testing.T) {
	for _, c := range realisticSecrets {
		got := Redact(c.text)
		if strings.Contains(got, c.secret) {
			t.Errorf("%s: secret kept: %q", c.name, got)
		}
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: no redaction marker: %q", c.name, got)
		}
		if again := Redact(got); again != got {
			t.Errorf("%s: not idempotent: %q then %q", c.name, got, again)
		}
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"The model used 1200 input tokens and 80 output tokens.",
		`{"input_tokens": 5, "output_tokens": 7, "token_budget": 100, "max_tokens": 512}`,
		"Keyboard shortcuts: press the key to continue.",
		"max_tokens=512&temperature=0.2",
		"see https://example.com/docs/api?page=2",
		`{"name":"weather","arguments":{"city":"Oslo"}}`,
		"Asia and authors of basic tasks",
		"",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want unchanged", s, got)
		}
	}
}

// setEveryString sets every string reachable in v (fields, lists, maps,
// and the values of an interface, such as an event's payload) to s, so a
// field added later without redaction fails the tests that use it. It
// returns the number of strings set.
func setEveryString(v reflect.Value, s string) int {
	n := 0
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
		return 1
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Field(i).CanSet() || v.Field(i).Type() == reflect.TypeFor[time.Time]() {
				continue
			}
			n += setEveryString(v.Field(i), s)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			v.Set(reflect.ValueOf([]string{s, s}))
			n++
		}
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		n += setEveryString(c, s)
		v.Set(c)
	}
	return n
}

// secretFields is a Fields payload with s in every place a string can be,
// and secret-named keys whose values are not themselves secret-looking.
func secretFields(s string) Fields {
	return Fields{
		"note": s, s: "key", "api_key": "plainvalue", "token": json.Number("12345678"),
		"nested": map[string]any{"list": []any{s, map[string]any{"password": "plainvalue"}}},
		"typed":  map[string]string{"x": s, "secret": "plainvalue"},
		"list":   []string{s},
		"struct": struct{ Header string }{s},
	}
}

// Every string field of every payload family, and every string of a
// Fields payload, is redacted before any sink sees it; the caller's
// slices and maps are left as they were.
func TestEmitRedactsEveryFieldBeforeAnySink(t *testing.T) {
	payloads := append(slices.Clone(families), Fields{})
	for _, c := range realisticSecrets {
		for _, zero := range payloads {
			t.Run(fmt.Sprintf("%s/%T", c.name, zero), func(t *testing.T) {
				var buf bytes.Buffer
				var seen []Event
				tr := New(JSONL(&buf), SinkFunc(func(ev Event) { seen = append(seen, ev) }))
				ev := Event{Payload: zero}
				n := setEveryString(reflect.ValueOf(&ev).Elem(), c.text)
				if f, ok := zero.(Fields); ok {
					f = secretFields(c.text)
					ev.Payload = f
					defer func() {
						if f["note"] != c.text || f["nested"].(map[string]any)["list"].([]any)[0] != c.text {
							t.Fatal("Emit modified the caller's map")
						}
					}()
				} else if want := 4 + stringFields(zero); n != want {
					t.Fatalf("%d strings set, want %d", n, want)
				}
				before, _ := json.Marshal(ev.Payload)
				tr.Emit(ev)
				if strings.Contains(buf.String(), c.secret) {
					t.Fatalf("secret reached the JSONL sink: %s", buf.String())
				}
				if strings.Contains(buf.String(), "plainvalue") || strings.Contains(buf.String(), "12345678") {
					t.Fatalf("a secret-named field kept its value: %s", buf.String())
				}
				cb, _ := json.Marshal(seen)
				if strings.Contains(string(cb), c.secret) {
					t.Fatalf("secret reached the callback: %s", cb)
				}
				if after, _ := json.Marshal(ev.Payload); string(after) != string(before) {
					t.Fatal("Emit modified the caller's payload")
				}
			})
		}
	}
}

// stringFields counts the fields of p's struct that hold strings.
func stringFields(p Payload) int {
	n := 0
	v := reflect.TypeOf(p)
	for i := range v.NumField() {
		if k := v.Field(i).Type.Kind(); k == reflect.String || k == reflect.Slice {
			n++
		}
	}
	return n
}

// TestPayloadFamiliesAreAllTested reads the package's source: every type
// with a redacted method (every Payload) must be in families, which the
// redaction, encoder and round-trip tests go through, so a family added
// later cannot escape them.
func TestPayloadFamiliesAreAllTested(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{"Fields": true}
	for _, p := range families {
		tested[reflect.TypeOf(p).Name()] = true
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "redacted" {
				continue
			}
			found++
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if name := recv.(*ast.Ident).Name; !tested[name] {
				t.Errorf("payload %s is not in families: add it, so its fields are tested", name)
			}
		}
	}
	if found != len(tested) {
		t.Errorf("%d redacted methods, %d payloads tested", found, len(tested))
	}
}

// TestRedactRecordedRequestHeaders feeds the credential headers of real
// recorded HTTP requests (langchaingo httprr recordings) through a tracer.
func TestRedactRecordedRequestHeaders(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixturetest.Dir(t), "langchaingo", "*.httprr"))
	checked := 0
	for _, f := range files {
		for _, ex := range fixturetest.HTTPRR(t, "langchaingo/"+filepath.Base(f)) {
			r := ex.Request
			for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
				v := r.Header.Get(h)
				if v == "" {
					continue
				}
				secret := v[strings.LastIndexByte(v, ' ')+1:]
				var buf bytes.Buffer
				New(JSONL(&buf)).Emit(Event{Type: LLMResponse, Payload: ModelCall{Content: h + ": " + v}})
				New(JSONL(&buf)).Emit(Event{Type: "host_request", Payload: Fields{"header": h + ": " + v, "path": r.Path}})
				if strings.Contains(buf.String(), secret) {
					t.Errorf("%s: %s value kept: %s", filepath.Base(f), h, buf.String())
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no recorded request carried a credential header: nothing was checked")
	}
}

func TestPreviewRedactsBeforeCutting(t *testing.T) {
	s := strings.Repeat("x", 190) + " Bearer abcdefgh12345678 tail"
	got := Preview(s, 200)
	if strings.Contains(got, "abcd") {
		t.Errorf("partial secret kept: %q", got)
	}
	if !strings.HasSuffix(got, "...") || utf8.RuneCountInString(got) != 203 {
		t.Errorf("preview = %q (%d runes)", got, utf8.RuneCountInString(got))
	}
	if Preview("héllo", 3) != "hél..." {
		t.Errorf("rune cut = %q", Preview("héllo", 3))
	}
	if Preview("short", 200) != "short" {
		t.Error("short string changed")
	}
}

func FuzzRedact(f *testing.F) {
	for _, c := range realisticSecrets {
		f.Add(c.text, "")
	}
	f.Add(`{"password":"a\"b"}`, "x")
	f.Add("key=", "authorization")
	f.Add("\\\"token\\\": \\\"", "\"")
	f.Add(`{"token": 12345, "auth": {"authorization": [1,2]}}`, "")
	f.Add(`{"k":"-----BEGIN PRIVATE KEY-----\nabc"}`, `{"password":null}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		s := a + b
		got := Redact(s)
		if again := Redact(got); again != got {
			t.Fatalf("not idempotent:\n in  %q\n out %q\n 2nd %q", s, got, again)
		}
		if json.Valid([]byte(s)) && !json.Valid([]byte(got)) {
			t.Fatalf("valid JSON became invalid: %q → %q", s, got)
		}
		if json.Valid([]byte(s)) && !json.Valid(RedactJSON([]byte(s))) {
			t.Fatalf("RedactJSON broke %q", s)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("valid UTF-8 became invalid: %q → %q", s, got)
		}
		if !mayHoldSecret(s) {
			full := s
			for _, p := range secretPatterns {
				full = p.re.ReplaceAllString(full, p.repl)
			}
			if full != s {
				t.Fatalf("fast filter missed a secret in %q (full redaction gives %q)", s, full)
			}
		}
		// A known secret placed between separators never survives.
		const secret = "sk-proj-FUZZsecret0123456789abcdef"
		wrapped := fmt.Sprintf("%s %s %s", a, secret, b)
		if out := Redact(wrapped); strings.Contains(out, secret) {
			t.Fatalf("secret kept in %q → %q", wrapped, out)
		}
	})
}

func TestRedactJSON(t *testing.T) {
	in := []byte(`{"q":"weather","api_key":"zz-very-secret-1","n":3,"nested":{"password":12345,"note":"Bearer abcdefgh12345678"},"list":["sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA"]}`)
	out := RedactJSON(in)
	if !json.Valid(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	for _, secret := range []string{"zz-very-secret-1", "12345", "abcdefgh12345678", "sk-proj-AAAA"} {
		if bytes.Contains(out, []byte(secret)) {
			t.Errorf("%s kept in %s", secret, out)
		}
	}
	if !bytes.Contains(out, []byte(`"q":"weather"`)) || !bytes.Contains(out, []byte(`"n":3`)) {
		t.Errorf("ordinary values changed: %s", out)
	}
	clean := []byte(`{"b": 1,  "a": "x"}`)
	if got := RedactJSON(clean); !bytes.Equal(got, clean) {
		t.Errorf("clean document rewritten: %s", got)
	}
	if got := RedactJSON([]byte(`{"token": "abc`)); bytes.Contains(got, []byte("abc")) && !bytes.Contains(got, []byte(Redacted)) {
		t.Errorf("invalid JSON not redacted as text: %s", got)
	}
}
