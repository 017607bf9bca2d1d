package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// TestStateNeedsItsGrant: keepinput.wasm imports notify_tool_list_changed
// and answers each call with the input of the call before it. Without the
// grant state every call gets a fresh instance, so a second caller does
// not see the first's input (issue 38: one instance served every caller,
// granted nothing); with it, one instance serves every call, in turn, as
// the person who granted it chose.
func TestStateNeedsItsGrant(t *testing.T) {
	t.Parallel()
	for _, granted := range []bool{false, true} {
		t.Run(fmt.Sprintf("state granted %v", granted), func(t *testing.T) {
			t.Parallel()
			h, _ := newTestHost(t, Options{})
			var gs []manifest.Grant
			if granted {
				gs = grants(t, "state")
			}
			l := load(t, h, "keepinput.wasm", Module{Grants: gs})
			first := call(t, l, "keepinput", `{"from":"alice","secret":"a-1"}`)
			second := call(t, l, "keepinput", `{"from":"bob"}`)
			if first.IsError || second.IsError {
				t.Fatalf("calls: %+v %+v", first, second)
			}
			if string(first.StructuredContent) != `{}` {
				t.Errorf("the first call saw %s", first.StructuredContent)
			}
			want := `{}`
			if granted {
				want = `{"params":{"name":"keepinput","arguments":{"from":"alice","secret":"a-1"}}}`
			}
			if got := string(second.StructuredContent); got != want {
				t.Errorf("the second caller saw %s, want %s", got, want)
			}
		})
	}
}

// TestStateUnderConcurrentCallers: with the grant, concurrent callers
// take the one instance in turn: each sees exactly one earlier call's
// whole input (or none, for the first), never a torn one, and each input
// is seen at most once. Without it, none sees another's.
func TestStateUnderConcurrentCallers(t *testing.T) {
	t.Parallel()
	const callers = 16
	for _, granted := range []bool{false, true} {
		t.Run(fmt.Sprintf("state granted %v", granted), func(t *testing.T) {
			t.Parallel()
			h, _ := newTestHost(t, Options{})
			var gs []manifest.Grant
			if granted {
				gs = grants(t, "state")
			}
			l := load(t, h, "keepinput.wasm", Module{Grants: gs})
			tl, _ := l.Tool("keepinput")
			seen := make([]string, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() {
					res, err := tl.Call(context.Background(), toolCall("keepinput", fmt.Sprintf(`{"caller":%d}`, i)))
					if err != nil || res.IsError {
						t.Errorf("caller %d: %v %+v", i, err, res)
						return
					}
					seen[i] = string(res.StructuredContent)
				})
			}
			wg.Wait()
			empty := 0
			var others []int
			for i, s := range seen {
				if s == `{}` {
					empty++
					continue
				}
				var doc struct {
					Params struct {
						Arguments struct{ Caller int } `json:"arguments"`
					} `json:"params"`
				}
				if err := json.Unmarshal([]byte(s), &doc); err != nil {
					t.Fatalf("caller %d saw %q, not a whole input", i, s)
				}
				if doc.Params.Arguments.Caller == i {
					t.Fatalf("caller %d saw its own input", i)
				}
				others = append(others, doc.Params.Arguments.Caller)
			}
			slices.Sort(others)
			if len(slices.Compact(slices.Clone(others))) != len(others) {
				t.Errorf("an input was seen twice: %v", others)
			}
			if !granted && empty != callers {
				t.Errorf("without the grant %d callers saw another's input", callers-empty)
			}
			if granted && (empty != 1 || len(others) != callers-1) {
				t.Errorf("with the grant %d callers saw nothing and %d another's input, want 1 and %d", empty, len(others), callers-1)
			}
		})
	}
}

// TestInspectShowsState: importing notify_*_list_changed asks for state,
// which Requested shows and Implies counts as asked.
func TestInspectShowsState(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{Isolation: Isolation{InProcess: true}})
	ins, err := h.Inspect(context.Background(), "keepinput", wasmFile(t, "keepinput.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := ins.Requested()
	if err != nil {
		t.Fatal(err)
	}
	state := manifest.Grant{Kind: manifest.KindState}
	if !slices.Contains(req, state) || !ins.Implies(state) {
		t.Errorf("requested %v, want state among them", req)
	}
	ins, err = h.Inspect(context.Background(), "echo", wasmFile(t, "echo.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if req, _ := ins.Requested(); slices.Contains(req, state) || ins.Implies(state) {
		t.Errorf("echo requests %v", req)
	}
}

// TestListChangesWithoutState: a plugin that says its tools changed, not
// granted state, gets a fresh instance per call, and its notification
// still works in that call: the host reads the lists of the call's
// instance again after it. (hypermcpv1go's add_tool adds a tool to what
// its instance remembers: each fresh instance adds tool_1.)
func TestListChangesWithoutState(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "hypermcpv1go.wasm", Module{})
	if l.single != nil {
		t.Fatal("one instance serves every call without the grant state")
	}
	for range 2 {
		if res := call(t, l, "add_tool", `{}`); res.Text() != "added tool_1" {
			t.Fatalf("add_tool: %+v", res)
		}
	}
	var names []string
	for _, tl := range l.Tools() {
		names = append(names, tl.Spec().Name)
	}
	if !slices.Equal(names, []string{"greet", "add_tool", "tool_1"}) {
		t.Fatalf("tools %v, want the lists of the last call's instance", names)
	}
}
