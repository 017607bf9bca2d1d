package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/internal/textfold"
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
	f.Add(`{"password":"a\u0022b","x":"\nZx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"}`, `{"k":"\\x5c\"sk-proj-abcdefghijklmnop"}`)
	for _, c := range unknownShapes {
		f.Add(c.text, `{"a":"`+c.text+`"}`)
	}
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
		f, m := textfold.Fold(s)
		for _, text := range []string{s, f} {
			if spans := appendSecretSpans(nil, text, nil); !mayHoldSecret(text) && len(spans) > 0 {
				t.Fatalf("fast filter missed a secret in %q (the rules find %v)", text, spans)
			}
		}
		if m != nil && foldMayHoldSecret(s) != mayHoldSecret(f) {
			t.Fatalf("the filter folding as it goes says %v, on the fold %v: %q", foldMayHoldSecret(s), mayHoldSecret(f), s)
		}
		if clean(s) && (len(appendSecretSpans(nil, s, nil)) > 0 || len(appendSecretSpans(nil, f, m)) > 0) {
			t.Fatalf("clean(%q), yet the rules find a secret", s)
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

// Credentials of shapes the rules name nowhere: each is caught by its
// name (header, JSON key, query parameter, name=value) or by its shape,
// also when the name or the value is disguised.
var unknownShapes = []struct{ name, text, secret string }{
	{"X-Auth-Key header", "X-Auth-Key: 1a2b3c4d5e6f", "1a2b3c4d5e6f"},
	{"Azure subscription key", "Ocp-Apim-Subscription-Key: 0123456789abcdef0123", "0123456789abcdef0123"},
	{"X-Api-Token header", "x-api-token: abc123def456", "abc123def456"},
	{"GitLab PRIVATE-TOKEN", "PRIVATE-TOKEN: qwertyuiop123", "qwertyuiop123"},
	{"cookie header", "Cookie: sessionid=abc123def456", "abc123def456"},
	{"set-cookie header", "Set-Cookie: sid=zzz999yyy; HttpOnly", "zzz999yyy"},
	{"proxy authorization", "Proxy-Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"},
	{"AWS security token", "X-Amz-Security-Token: FwoGZXIvYXdzEBYaDNotARealToken", "FwoGZXIvYXdzEBYaDNotARealToken"},
	{"camelCase JSON key", `{"clientSecret":"x1y2z3w4"}`, "x1y2z3w4"},
	{"JSON auth_token", `{"auth_token": "tok-998877"}`, "tok-998877"},
	{"JSON header map", `{"headers":{"X-Auth-Key":"hdr-secret-1"}}`, "hdr-secret-1"},
	{"JSON session id number", `{"sessionId": 8675309123}`, "8675309123"},
	{"JSON db_pass", `{"db_pass":"hunter2hunter2"}`, "hunter2hunter2"},
	{"JSON passcode", `{"passcode":"739184"}`, "739184"},
	{"JSON signature", `{"signature":"c2lnbmF0dXJl"}`, "c2lnbmF0dXJl"},
	{"JSON escaped name", `{"pass\u0077ord":"escaped-name-secret"}`, "escaped-name-secret"},
	{"query sig", "GET /blob?sv=2024&sig=abcdef123456&se=2030", "abcdef123456"},
	{"query amz signature", "https://s3.example.com/o?X-Amz-Credential=AKIDEXAMPLE%2F2024&X-Amz-Signature=fe5f80f77d5fa3", "fe5f80f77d5fa3"},
	{"query access_token", "https://x.example.com/cb?access_token=at-12345678&state=s", "at-12345678"},
	{"query client_secret", "/oauth?client_secret=cs-abcdef&x=1", "cs-abcdef"},
	{"query auth", "wss://x.example.com/socket?auth=zyx987wvu", "zyx987wvu"},
	{"free text password", "password: hunter2hunter2", "hunter2hunter2"},
	{"env file", "STRIPE_WEBHOOK_SECRET=abc123webhook", "abc123webhook"},
	{"Basic in prose", "send Basic dXNlcjpwYXNzd29yZA== with it", "dXNlcjpwYXNzd29yZA=="},
	{"random key", "the key is Zx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2 ok", "Zx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"},
	{"npm token", "//registry.example/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"},
	{"Google OAuth token", "token ya29.a0AfH6SMBexampleexampleexample", "ya29.a0AfH6SMBexampleexampleexample"},
	{"xAI key", "xai-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN0123", "xai-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN0123"},
	// Our own attacks on the name rule: other syntaxes.
	{"XML element", "<password>hunter2hunter2</password>", "hunter2hunter2"},
	{"XML element with attributes", `<apiKey kind="x">abc123def456</apiKey>`, "abc123def456"},
	{"Go's %v of a header map", "map[Accept:[json] X-Auth-Key:[abc123def456]]", "abc123def456"},
	{"JSON list under a secret name", `{"password": ["abc123", "def456"]}`, "def456"},
	{"JSON numbers under a secret name", `{"pins": 1, "auth": {"authorization": [123456, 789012]}}`, "789012"},
	{"Go assignment", "API_KEY := abc123def456", "abc123def456"},
	{"quoted value with spaces", `password = "correct horse battery"`, "battery"},
	{"command-line flag", "run --password hunter2hunter2 --verbose", "hunter2hunter2"},
	{"command-line flag, quoted", "curl --oauth2-bearer 'tok12345678'", "tok12345678"},
	// Disguised names.
	{"Cyrillic in the name", "X-\u0410uth-Key: cyr1llic-secret", "cyr1llic-secret"},
	{"zero-width in the name", "pass\u200bword=zw-secret-123", "zw-secret-123"},
	{"fullwidth name", "ＡＰＩ＿ＫＥＹ=fw-secret-123", "fw-secret-123"},
	{"HTML entity in the name", "api&#95;key=ent-secret-123", "ent-secret-123"},
	{"percent in the name", "?api%5Fkey=pct-secret-123", "pct-secret-123"},
	// Disguised values.
	{"zero-width in a key", "sk-\u200bproj-abcdefghijklmnopqrstuvwx", "proj-abcdefghijklmnopqrstuvwx"},
	{"fullwidth key", "ｓｋ－ｐｒｏｊ－ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒ", "ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒ"},
	{"no-break space after Bearer", "Bearer\u00a0abcdefghijkl123", "abcdefghijkl123"},
	{"escaped key in JSON", `{"k":"\u0073k-proj-abcdefghijklmnopqrstuvwx"}`, "proj-abcdefghijklmnopqrstuvwx"},
}

func TestRedactUnknownShapesAndDisguises(t *testing.T) {
	for _, c := range unknownShapes {
		got := Redact(c.text)
		if strings.Contains(got, c.secret) || !strings.Contains(got, Redacted) {
			t.Errorf("%s: %q → %q", c.name, c.text, got)
		}
		if again := Redact(got); again != got {
			t.Errorf("%s: not idempotent: %q then %q", c.name, got, again)
		}
		if json.Valid([]byte(c.text)) && !json.Valid([]byte(got)) {
			t.Errorf("%s: JSON broken: %q", c.name, got)
		}
	}
}

// Names and values that are no secret stay visible.
func TestRedactControlsStayVisible(t *testing.T) {
	for _, s := range []string{
		`{"input_tokens": 5, "output_tokens": 7, "total_tokens": 12, "max_tokens": 512, "token_budget": 100, "token_count": 3}`,
		`{"keyboard": "qwerty", "monkey": "george", "author": "Ada Lovelace", "authority": "bank"}`,
		`{"auth_type": "oauth2", "auth_url": "https://id.example.com", "key_name": "primary", "cookie_policy": "strict"}`,
		"keyboard: qwerty\nauthor: Ada\nsignal: strong\ndesign: clean",
		"sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 ok",
		"id 123e4567-e89b-12d3-a456-426614174000",
		"AbstractSingletonProxyFactoryBean2 and src/main/java/com/example/MyApplication2Test",
		"model anthropic/claude-3-5-sonnet-20241022-Latest, call toolu_01D7FLrfh4GYq7yT1ULFeyMV",
		"THIS_IS_A_VERY_LONG_CONSTANT_NAME_2 getUserAccountSettingsByIdentifier2",
		"The author's passion for design signals a basic truth about sessions.",
		"Basic arithmetic is basic; the password policy is strict.",
		"run --verbose --key-file /etc/app.pem --token-limit 100 -n 3",
		"<author>Ada</author> <title>On keys</title> map[Accept:[json]]",
		`<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC">`,
		"golang.org/x/text v0.42.0 h1:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want unchanged", s, got)
		}
	}
	for _, name := range []string{"input_tokens", "token_budget", "keyboard", "monkey", "author", "auth_type", "auth_url", "key_name", "cookie_policy", "tokenizer", "secretary", "passenger", "bypass", "keyword"} {
		if isSecretName(name) {
			t.Errorf("%s is a secret name", name)
		}
	}
	for _, name := range []string{"X-Auth-Key", "Ocp-Apim-Subscription-Key", "apiKey", "APIKey", "XApiKey", "clientSecret", "session_id", "SESSIONID", "db_pass", "pwd", "passphrase", "X-CSRF-Token", "jwt", "Proxy-Authorization", "AccountKey", "githubToken", "DBPASSWORD", "signature_b64", "credentials", "cookie", "api_key_id", "p\u0430ssword", "ｐａｓｓｗｏｒｄ"} {
		if !isSecretName(name) {
			t.Errorf("%s is not a secret name", name)
		}
	}
}

// A header map in a Fields payload: the values of secret-named headers go,
// the others stay.
func TestRedactHeaderMaps(t *testing.T) {
	var buf bytes.Buffer
	h := http.Header{"X-Auth-Key": {"hdr-value-1"}, "Cookie": {"a=hdr-value-2"}, "Accept": {"application/json"}, "X-Request-Id": {"req-42"}}
	New(JSONL(&buf)).Emit(Event{Type: "http_request", Payload: Fields{"headers": h, "header_map": map[string][]string{"Ocp-Apim-Subscription-Key": {"hdr-value-3"}}, "secrets": map[string]any{"db": "hdr-value-4"}}})
	out := buf.String()
	for _, secret := range []string{"hdr-value-1", "hdr-value-2", "hdr-value-3", "hdr-value-4"} {
		if strings.Contains(out, secret) {
			t.Errorf("%s kept: %s", secret, out)
		}
	}
	if !strings.Contains(out, "application/json") || !strings.Contains(out, "req-42") {
		t.Errorf("ordinary headers lost: %s", out)
	}
	doc := RedactJSON([]byte(`{"headers":{"X-Auth-Key":["hdr-value-5"],"Accept":["text/plain"]},"credentials":{"user":"bob","token":{"v":"hdr-value-6"}}}`))
	if bytes.Contains(doc, []byte("hdr-value-5")) || bytes.Contains(doc, []byte("hdr-value-6")) || !bytes.Contains(doc, []byte("text/plain")) || !json.Valid(doc) {
		t.Errorf("RedactJSON: %s", doc)
	}
}

// A secret next to an escape: the escape stays whole, and JSON stays JSON.
func TestRedactKeepsJSONAroundEscapes(t *testing.T) {
	for _, c := range []struct{ doc, secret string }{
		{`{"x":"\nZx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"}`, "Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"},
		{`{"x":"\u0041Zx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"}`, "Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"},
		{`{"x":"\\\"Zx8Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2\""}`, "Qw2Lp0Rt5Vb7Nm3Kj9Hg1Fd4Sa6Ye0Uc2"},
		{`{"k":"\u0073k-proj-abcdefghijklmnopqrstuvwx"}`, "abcdefghijklmnopqrstuvwx"},
		{`{"password":"a\u0022b-and-more"}`, "b-and-more"},
		{`{"a":"{\"api_key\":\"zz-secret-value-123\"}"}`, "zz-secret-value-123"},
		{`{"token":12345678}`, "12345678"},
	} {
		got := Redact(c.doc)
		if !json.Valid([]byte(got)) || strings.Contains(got, c.secret) {
			t.Errorf("%s → %s", c.doc, got)
		}
	}
}

// RedactJSON's filter looks at the fold too: a disguised name is no way
// around it.
func TestRedactJSONSeesDisguisedNames(t *testing.T) {
	for _, doc := range []string{
		`{"p\u0430ssword":"value-one"}`,
		`{"api\u200bkey":"value-one"}`,
		`{"ＴＯＫＥＮ":"value-one"}`,
	} {
		if got := RedactJSON([]byte(doc)); bytes.Contains(got, []byte("value-one")) || !json.Valid(got) {
			t.Errorf("RedactJSON(%s) = %s", doc, got)
		}
	}
}
