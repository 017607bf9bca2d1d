package cache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

func lookupTool(t *testing.T) tool.Tool {
	t.Helper()
	lt, err := tool.New("lookup", "Look an order up.", func(_ context.Context, in struct {
		ID string `json:"id"`
	}) (string, error) {
		return "order " + in.ID + " shipped", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lt
}

// script is the model of one run: a tool call, then the answer.
func script() *scripted.Provider {
	return scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"id":"42"}`)}}, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}},
		scripted.Turn{Text: "Order 42 shipped.", Usage: &llm.Usage{InputTokens: 150, OutputTokens: 5}},
	)
}

func run(t *testing.T, p llm.Provider, tools ...tool.Tool) *loop.Result {
	t.Helper()
	reg := &tool.Registry{}
	for _, tl := range tools {
		if err := reg.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	res, err := (&loop.Agent{Provider: p, Tools: reg}).Run(context.Background(), "Where is order 42?")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSameRunTwice: the same scripted run twice through a cache file
// (opened again, as a second process would): the second makes no
// provider call and gives the same Result; its usage is zero, and the
// trace says what the hits saved.
func TestSameRunTwice(t *testing.T) {
	file := filepath.Join(t.TempDir(), "responses.cache")
	var traced bytes.Buffer
	tr := trace.New(trace.JSONL(&traced))

	first := script()
	c, err := cache.Open(first, cache.Options{File: file, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	res1 := run(t, c, lookupTool(t))
	c.Close()
	if first.Calls() != 2 {
		t.Fatalf("first run: %d provider calls, want 2", first.Calls())
	}

	second := script()
	c, err = cache.Open(second, cache.Options{File: file, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res2 := run(t, c, lookupTool(t))
	if second.Calls() != 0 {
		t.Errorf("second run: %d provider calls, want 0", second.Calls())
	}
	if res1.Output != res2.Output || res1.Steps != res2.Steps || res1.StopReason != res2.StopReason || !reflect.DeepEqual(res1.Messages, res2.Messages) {
		t.Errorf("the results differ:\n%+v\n%+v", res1, res2)
	}
	if res1.Usage.TotalTokens != 265 || res2.Usage != (llm.Usage{}) {
		t.Errorf("usage: first %+v, second %+v; want 265 total, then none spent", res1.Usage, res2.Usage)
	}
	sum, err := trace.Summarize(&traced)
	if err != nil {
		t.Fatal(err)
	}
	if sum.CacheHits != 2 || sum.CacheMisses != 2 || sum.SavedInputTokens != 250 || sum.SavedOutputTokens != 15 {
		t.Errorf("summary: %d hits, %d misses, saved %d in %d out; want 2, 2, 250, 15", sum.CacheHits, sum.CacheMisses, sum.SavedInputTokens, sum.SavedOutputTokens)
	}
	if !strings.Contains(sum.String(), "response cache: 2 hits, 2 misses   saved: 250 in, 15 out tokens") {
		t.Errorf("summary text:\n%s", sum)
	}
}

// TestChangedToolSchemaMisses: a tool whose schema changed is another
// request; so is any other field. Whitespace in JSON is not.
func TestChangedToolSchemaMisses(t *testing.T) {
	c, err := cache.Open(scripted.New(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	base := func() *llm.Request {
		return &llm.Request{
			Model:    "m",
			Messages: []llm.Message{llm.SystemText("sys"), llm.UserText("hi")},
			Tools:    []llm.ToolSpec{{Name: "lookup", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)}},
		}
	}
	key := c.Key
	want := key(base())
	same := base()
	same.Tools[0].InputSchema = json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"id\": {\"type\": \"string\"}}}")
	if key(same) != want {
		t.Error("whitespace in a schema changed the key")
	}
	for name, change := range map[string]func(*llm.Request){
		"tool schema": func(r *llm.Request) {
			r.Tools[0].InputSchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)
		},
		"tool description": func(r *llm.Request) { r.Tools[0].Description = "e" },
		"output schema":    func(r *llm.Request) { r.Tools[0].OutputSchema = json.RawMessage(`{"type":"object"}`) },
		"another tool": func(r *llm.Request) {
			r.Tools = append(r.Tools, llm.ToolSpec{Name: "x", InputSchema: json.RawMessage(`{}`)})
		},
		"model":           func(r *llm.Request) { r.Model = "n" },
		"system prompt":   func(r *llm.Request) { r.Messages[0] = llm.SystemText("sys2") },
		"a message":       func(r *llm.Request) { r.Messages = append(r.Messages, llm.UserText("more")) },
		"role":            func(r *llm.Request) { r.Messages[1].Role = llm.RoleAssistant },
		"signature":       func(r *llm.Request) { r.Messages[1].Parts[0].Signature = "sig" },
		"temperature":     func(r *llm.Request) { r.Temperature = &temp },
		"max tokens":      func(r *llm.Request) { r.MaxTokens = 10 },
		"tool choice":     func(r *llm.Request) { r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNone} },
		"response format": func(r *llm.Request) { r.ResponseFormat = &llm.ResponseFormat{Type: "json_object"} },
	} {
		r := base()
		change(r)
		if key(r) == want {
			t.Errorf("a changed %s did not change the key", name)
		}
	}

	// Another provider is another request too.
	other, err := cache.Open(named{scripted.New(), "other"}, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if other.Key(base()) == want {
		t.Error("two providers share a key")
	}

	// Through the provider: the changed schema calls it again.
	p := scripted.New(scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	c, err = cache.Open(p, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r1, _ := c.Complete(ctx, base())
	r2, _ := c.Complete(ctx, base())
	changed := base()
	changed.Tools[0].InputSchema = json.RawMessage(`{"type":"object"}`)
	r3, err := c.Complete(ctx, changed)
	if err != nil || r1.Message.Text() != "one" || r2.Message.Text() != "one" || r3.Message.Text() != "two" || p.Calls() != 2 {
		t.Errorf("answers %q %q %q (err %v), %d provider calls; want one one two, 2", r1.Message.Text(), r2.Message.Text(), r3.Message.Text(), err, p.Calls())
	}
}

// named is a provider of another name.
type named struct {
	llm.Provider
	name string
}

func (n named) Name() string { return n.name }

// TestStreamFromCache: a streamed request is answered from the cache as
// a stream, reasoning, text and tool calls in order, then done.
func TestStreamFromCache(t *testing.T) {
	p := scripted.New(scripted.Turn{Reasoning: "think", Text: "calling", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"id":"1"}`)}}})
	c, err := cache.Open(p, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	collect := func() ([]string, *llm.Response) {
		var got []string
		var done *llm.Response
		for ev, err := range c.Stream(context.Background(), req) {
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case llm.StreamToolCall:
				got = append(got, "call:"+ev.ToolCall.Name)
			case llm.StreamDone:
				done = ev.Response
			default:
				got = append(got, string(ev.Type)+":"+ev.Text)
			}
		}
		return got, done
	}
	live, liveDone := collect()
	cached, cachedDone := collect()
	if p.Calls() != 1 {
		t.Errorf("%d provider calls, want 1", p.Calls())
	}
	want := []string{"reasoning:think", "text:calling", "call:lookup"}
	if !reflect.DeepEqual(cached, want) || cachedDone == nil || !reflect.DeepEqual(cachedDone.Message, liveDone.Message) {
		t.Errorf("cached stream %v (done %v), want %v ending with the live answer; live was %v", cached, cachedDone, want, live)
	}
	// Stopping early is honoured.
	n := 0
	for range c.Stream(context.Background(), req) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("the cached stream went on after yield returned false")
	}
}

func TestTTLAndBypass(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	p := scripted.New(scripted.Turn{Text: "a"}, scripted.Turn{Text: "b"}, scripted.Turn{Text: "c"})
	c, err := cache.Open(p, cache.Options{TTL: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	ctx := context.Background()
	answer := func(ctx context.Context) string {
		r, err := c.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r.Message.Text()
	}
	got := []string{answer(ctx)}
	now = now.Add(59 * time.Minute)
	got = append(got, answer(ctx))
	now = now.Add(2 * time.Minute)
	got = append(got, answer(ctx), answer(cache.Bypass(ctx)), answer(ctx))
	if want := []string{"a", "a", "b", "c", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("answers %v, want %v (a hit within the TTL, a miss after, a fresh one when bypassed, stored)", got, want)
	}
}

func TestBounds(t *testing.T) {
	p := scripted.New(scripted.Turn{Text: "1"}, scripted.Turn{Text: "2"}, scripted.Turn{Text: "3"}, scripted.Turn{Text: "fourth"})
	c, err := cache.Open(p, cache.Options{MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := func(s string) *llm.Request { return &llm.Request{Messages: []llm.Message{llm.UserText(s)}} }
	c.Complete(ctx, req("1"))
	c.Complete(ctx, req("2"))
	c.Complete(ctx, req("1")) // a hit: 1 is now the most recently used
	c.Complete(ctx, req("3")) // evicts 2, the least recently used
	if st := c.Stats(); st.Entries != 2 {
		t.Errorf("%d entries, want 2", st.Entries)
	}
	r1, _ := c.Complete(ctx, req("1"))
	r2, _ := c.Complete(ctx, req("2"))
	if r1.Message.Text() != "1" || r2.Message.Text() != "fourth" || p.Calls() != 4 {
		t.Errorf("after eviction: %q, %q, %d calls; want 1 (kept), a new answer for 2 (evicted), 4", r1.Message.Text(), r2.Message.Text(), p.Calls())
	}

	// A byte bound: an answer larger than the whole cache is not kept.
	big := scripted.New(scripted.Turn{Text: strings.Repeat("x", 4096)}, scripted.Turn{Text: "again"})
	c, _ = cache.Open(big, cache.Options{MaxBytes: 1024})
	c.Complete(ctx, req("big"))
	if r, _ := c.Complete(ctx, req("big")); r.Message.Text() != "again" || c.Stats().Bytes > 1024 {
		t.Errorf("an answer over MaxBytes was kept: %q, %d bytes", r.Message.Text(), c.Stats().Bytes)
	}
}

// TestRedactsWhatIsStored: a secret in an answer is not in the file,
// and a hit returns the redacted answer (as a replay of a recording
// does), unless KeepSecrets.
func TestRedactsWhatIsStored(t *testing.T) {
	const secret = "sk-proj-Zq8vN2kLmP4rT7wX9yB3cD6fG1hJ5"
	for _, keep := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "c")
		p := scripted.New(scripted.Turn{Text: "the key is " + secret, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "use", Arguments: json.RawMessage(`{"api_key":"` + secret + `"}`)}}})
		c, err := cache.Open(p, cache.Options{File: file, KeepSecrets: keep})
		if err != nil {
			t.Fatal(err)
		}
		req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
		live, _ := c.Complete(context.Background(), req)
		hit, _ := c.Complete(context.Background(), req)
		c.Close()
		b, _ := os.ReadFile(file)
		if !strings.Contains(live.Message.Text(), secret) {
			t.Errorf("keep=%v: the live answer was redacted: %q", keep, live.Message.Text())
		}
		inFile := strings.Contains(string(b), secret)
		inHit := strings.Contains(hit.Message.Text(), secret) || strings.Contains(string(hit.Message.ToolCalls()[0].Arguments), secret)
		if inFile != keep || inHit != keep {
			t.Errorf("keep=%v: secret in the file %v, in the hit %v", keep, inFile, inHit)
		}
	}
}

// TestFileRobustness: a file that is not a cache's is refused and left
// alone; a line cut short is skipped; failures are not stored.
func TestFileRobustness(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("my notes\n"), 0o644)
	if _, err := cache.Open(scripted.New(), cache.Options{File: notes}); !errors.Is(err, cache.ErrNotCache) {
		t.Errorf("a file of notes: %v", err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "my notes\n" {
		t.Errorf("the notes were changed: %q", b)
	}

	file := filepath.Join(dir, "c")
	p := scripted.New(scripted.Turn{Err: errors.New("boom")}, scripted.Turn{Text: "ok", FinishReason: llm.FinishContentFilter}, scripted.Turn{Text: "ok"})
	c, _ := cache.Open(p, cache.Options{File: file})
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	ctx := context.Background()
	if _, err := c.Complete(ctx, req); err == nil {
		t.Fatal("no error")
	}
	c.Complete(ctx, req) // content_filter: not stored
	c.Complete(ctx, req)
	c.Close()
	if p.Calls() != 3 {
		t.Errorf("%d calls: a failure or a filtered answer was stored", p.Calls())
	}
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"abc","at":"2026-`) // a crash mid-write
	f.Close()
	c, err := cache.Open(scripted.New(), cache.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.Complete(ctx, req); err != nil || r.Message.Text() != "ok" {
		t.Errorf("after a cut line: %v, %v", r, err)
	}
}

// TestConcurrentUse hammers one cache from many goroutines (run with
// -race): every answer is the one for its request.
func TestConcurrentUse(t *testing.T) {
	p := scripted.NewWithOptions(scripted.Options{PerConversation: true}, scripted.Turn{Text: "answer"})
	c, err := cache.Open(p, cache.Options{File: filepath.Join(t.TempDir(), "c"), MaxEntries: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				req := &llm.Request{Messages: []llm.Message{llm.UserText(fmt.Sprint("q", (g+i)%12))}}
				r, err := c.Complete(context.Background(), req)
				if err != nil || r.Message.Text() != "answer" {
					t.Errorf("%v %v", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Hits+st.Misses != 400 || st.Entries > 8 {
		t.Errorf("stats %+v", st)
	}
}

// TestSignedEntries: with a key, the file's entries answer only the key
// that signed them. A file someone else wrote (another key, no key, or a
// line changed after signing) answers nothing and calls the provider;
// without a key, entries are read as written.
func TestSignedEntries(t *testing.T) {
	ctx := context.Background()
	base := func() *llm.Request { return &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}} }
	file := filepath.Join(t.TempDir(), "cache.jsonl")
	mine, theirs := []byte("mine-0123456789abcdef"), []byte("theirs-0123456789abcd")
	fill := func(key []byte, text string) {
		t.Helper()
		c, err := cache.Open(scripted.New(scripted.Turn{Text: text}), cache.Options{File: file, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Complete(ctx, base()); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	ask := func(key []byte) (string, int, cache.Stats) {
		t.Helper()
		p := scripted.New(scripted.Turn{Text: "fresh"})
		c, err := cache.Open(p, cache.Options{File: file, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		st := c.Stats()
		r, err := c.Complete(ctx, base())
		if err != nil {
			t.Fatal(err)
		}
		return r.Message.Text(), p.Calls(), st
	}

	fill(theirs, "planted")
	if got, calls, st := ask(mine); got != "fresh" || calls != 1 || st.Unsigned != 1 {
		t.Errorf("a file another key signed answered %q with %d provider calls, %d unsigned; want fresh, 1, 1", got, calls, st.Unsigned)
	}
	if got, calls, _ := ask(mine); got != "fresh" || calls != 0 {
		t.Errorf("the answer this key stored: %q with %d provider calls; want fresh from the cache, 0", got, calls)
	}

	// An entry written with no key is no entry of a keyed cache.
	os.Remove(file)
	fill(nil, "unsigned")
	if got, calls, _ := ask(nil); got != "unsigned" || calls != 0 {
		t.Errorf("without a key: %q with %d provider calls; want the entry as written, 0", got, calls)
	}
	if got, calls, _ := ask(mine); got != "fresh" || calls != 1 {
		t.Errorf("an unsigned entry answered %q with %d provider calls; want fresh, 1", got, calls)
	}

	// A signed line changed afterwards (its answer swapped) answers nothing.
	os.Remove(file)
	fill(mine, "signed")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(`"signed"`), []byte(`"forged"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, calls, _ := ask(mine); got != "fresh" || calls != 1 {
		t.Errorf("a line changed after signing answered %q with %d provider calls; want fresh, 1", got, calls)
	}
}
