package retrieve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/retrieve/retrievetest"
	"github.com/autoagent-go/autoagent/session"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
)

// The built-in retrievers and the embedded store pass the conformance
// suite any Retriever or Store must pass.

func filesOver(t *testing.T, texts []string) *retrieve.Files {
	t.Helper()
	dir := t.TempDir()
	for i, s := range texts {
		write(t, dir, fmt.Sprintf("note%d.md", i), s+"\n")
	}
	f, err := retrieve.OpenFiles(context.Background(), dir, retrieve.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func factsOver(t *testing.T, texts []string) retrieve.Retriever {
	t.Helper()
	ctx := context.Background()
	f, err := memory.NewFact(ctx, memory.FactOptions{Provider: scripted.New()})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range texts {
		if _, err := f.Remember(ctx, s, "user", memory.SourceUser); err != nil {
			t.Fatal(err)
		}
	}
	return retrieve.Facts(f)
}

func TestConformanceFiles(t *testing.T) {
	retrievetest.Run(t, retrievetest.Options{New: func(t *testing.T, texts []string) retrieve.Retriever { return filesOver(t, texts) }})
}

func TestConformanceFacts(t *testing.T) {
	retrievetest.Run(t, retrievetest.Options{New: factsOver, Whole: true})
}

func TestConformanceSessions(t *testing.T) {
	retrievetest.Run(t, retrievetest.Options{Whole: true, New: func(t *testing.T, texts []string) retrieve.Retriever {
		ctx := context.Background()
		st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		for i, s := range texts {
			if _, err := st.Append(ctx, session.Key{User: "ada", Session: fmt.Sprint(i)}, llm.UserText(s)); err != nil {
				t.Fatal(err)
			}
		}
		r := retrieve.Sessions(st)
		return retrieve.Func(func(ctx context.Context, q string, k int) ([]retrieve.Passage, error) {
			return r.Retrieve(retrieve.WithSession(ctx, session.Key{User: "ada", Session: "now"}), q, k)
		})
	}})
}

func TestConformanceFuse(t *testing.T) {
	retrievetest.Run(t, retrievetest.Options{Whole: true, New: func(t *testing.T, texts []string) retrieve.Retriever {
		half := len(texts) / 2
		return retrieve.Fuse(filesOver(t, texts[:half]), factsOver(t, texts[half:]))
	}})
}

func TestConformanceMemStore(t *testing.T) {
	retrievetest.RunStore(t, func(*testing.T) retrieve.Store { return retrieve.NewMemStore() })
}
