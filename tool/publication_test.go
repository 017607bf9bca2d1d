package tool

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

func namedTool(t *testing.T, name, reply string) Tool {
	t.Helper()
	type in struct{}
	return Must(New(name, "test tool", func(context.Context, in) (string, error) { return reply, nil }))
}

func reply(t *testing.T, reg *Registry, name string) string {
	t.Helper()
	res, err := reg.Call(context.Background(), Call{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return res.Text()
}

func TestPublicationSync(t *testing.T) {
	host := namedTool(t, "host_tool", "host")
	reg, err := NewRegistry(host)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPublication(reg)
	a1, b := namedTool(t, "a", "a1"), namedTool(t, "b", "b")
	if err := p.Sync([]Tool{a1, b}); err != nil {
		t.Fatal(err)
	}
	if got := reg.Len(); got != 3 {
		t.Fatalf("registry holds %d tools, want 3", got)
	}

	// A changed tool is replaced in place (same position), a gone one removed.
	a2 := namedTool(t, "a", "a2")
	if err := p.Sync([]Tool{a2}); err != nil {
		t.Fatal(err)
	}
	if reply(t, reg, "a") != "a2" {
		t.Errorf("a was not replaced")
	}
	if _, ok := reg.Get("b"); ok {
		t.Errorf("b is still registered after leaving the source")
	}
	var names []string
	for _, s := range reg.Specs() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"host_tool", "a"}) {
		t.Errorf("order %v, want [host_tool a]", names)
	}

	// A source tool can never take a name it did not publish.
	err = p.Sync([]Tool{a2, namedTool(t, "host_tool", "impostor")})
	if !errors.Is(err, ErrDuplicate) {
		t.Fatalf("publishing over a host tool: %v, want ErrDuplicate", err)
	}
	if reply(t, reg, "host_tool") != "host" {
		t.Errorf("the host tool was replaced")
	}
	// Leaving the source does not remove what the publication never owned.
	if err := p.Sync(nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("host_tool"); !ok || reg.Len() != 1 {
		t.Errorf("after emptying the source: %d tools, host tool present %v", reg.Len(), ok)
	}
}

func TestPublicationLeavesOthersTools(t *testing.T) {
	reg := &Registry{}
	p := NewPublication(reg)
	if err := p.Sync([]Tool{namedTool(t, "x", "mine")}); err != nil {
		t.Fatal(err)
	}
	// Someone else replaces x behind the publication's back.
	theirs := namedTool(t, "x", "theirs")
	if err := reg.Replace(theirs); err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(nil); err != nil {
		t.Fatal(err)
	}
	if reply(t, reg, "x") != "theirs" {
		t.Errorf("the publication removed a tool it no longer owned")
	}
}

func TestPublicationConcurrent(t *testing.T) {
	reg := &Registry{}
	p1, p2 := NewPublication(reg), NewPublication(reg)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_ = p1.Sync([]Tool{namedTool(t, "one", "v"), namedTool(t, "shared", "p1")})
		}()
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_ = p2.Sync([]Tool{namedTool(t, "two", "v")})
			} else {
				_ = p2.Sync([]Tool{namedTool(t, "shared", "p2")})
			}
		}()
	}
	wg.Wait()
	if _, ok := reg.Get("one"); !ok {
		t.Errorf("p1's tool is missing")
	}
}
