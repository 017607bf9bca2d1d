// Command autoagent-memory-sqlite is a memory backend: it serves a Fact
// memory (atomic facts per identity, bi-temporal history, BM25 recall)
// whose facts live in an SQLite database file, to an autoagent host over
// go-plugin. Several hosts, each running this backend, may share one
// database file: every change is an IMMEDIATE transaction in WAL mode, and
// each backend reloads the facts when another one has written.
//
// A host starts it (see memory/remote); run by hand it says so and exits.
//
//	--db PATH           the database file (created when missing); required
//	--identity NAME     whose facts these are; a database of another identity is refused
//	--max-facts N       cap on stored records (default 500, -1 none)
//	--max-messages N    compaction threshold (Fact's default when 0)
//	--keep-recent N     messages kept verbatim when compacting
//	--background        extract facts in the background (Compact returns at once)
//	--busy-timeout D    how long a write waits for another process (default 10s)
//
// Extracting facts from conversations and ForgetMatching need a model; give
// one with the flags of autoagent-provider-http (--provider, --model,
// --base-url, --api-key-env, --api-key-file), its key read by this process
// itself. Without --provider the memory stores, recalls and forgets by id,
// and Compact shows the facts without extracting new ones.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/remote"
	"github.com/autoagent-go/autoagent/memory/sqlitestore"
	"github.com/autoagent-go/autoagent/providers/catalog"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// config is the backend's command line.
type config struct {
	db          string
	identity    string
	maxFacts    int
	maxMessages int
	keepRecent  int
	background  bool
	busyTimeout time.Duration
	model       catalog.Config
}

func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("autoagent-memory-sqlite", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.db, "db", "", "the database file (created when missing)")
	fs.StringVar(&c.identity, "identity", "", "whose facts these are")
	fs.IntVar(&c.maxFacts, "max-facts", 0, "cap on stored records (0: default 500, -1: none)")
	fs.IntVar(&c.maxMessages, "max-messages", 0, "compaction threshold")
	fs.IntVar(&c.keepRecent, "keep-recent", 0, "messages kept verbatim when compacting")
	fs.BoolVar(&c.background, "background", false, "extract facts in the background")
	fs.DurationVar(&c.busyTimeout, "busy-timeout", 0, "how long a write waits for another process")
	c.model.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.db == "" {
		return config{}, errors.New("--db is required")
	}
	return c, nil
}

// run serves the memory and returns the exit status.
func run(args []string, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "autoagent-memory-sqlite:", err)
		return 2
	}
	m, err := open(context.Background(), c)
	if err != nil {
		fmt.Fprintln(stderr, "autoagent-memory-sqlite:", err)
		return 1
	}
	remote.Serve(m) // closes m when the host is gone
	return 0
}

// open builds the served memory.
func open(ctx context.Context, c config) (*sharedFact, error) {
	var p llm.Provider
	if c.model.Name != "" {
		var err error
		if p, err = catalog.New(c.model); err != nil {
			return nil, err
		}
	}
	st, err := sqlitestore.Open(c.db, sqlitestore.Options{BusyTimeout: c.busyTimeout})
	if err != nil {
		return nil, err
	}
	f, err := memory.NewFact(ctx, memory.FactOptions{
		Provider: p, Model: c.model.Model, Identity: c.identity, Store: st,
		MaxFacts: c.maxFacts, MaxMessages: c.maxMessages, KeepRecent: c.keepRecent, Background: c.background,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &sharedFact{Fact: f, store: st, db: c.db}, nil
}

// sharedFact is a Fact memory that notices writes by other processes
// sharing its database: before reading it compares the store's generation
// with the one it last loaded and reloads when they differ. Writes need no
// such care: the store applies them to the latest committed state.
type sharedFact struct {
	*memory.Fact
	store *sqlitestore.Store
	db    string

	mu   sync.Mutex
	seen int64
}

func (s *sharedFact) Name() string { return "sqlite fact memory (" + s.db + ")" }

// refresh reloads the facts when the database changed since the last load.
func (s *sharedFact) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.store.Generation(ctx)
	if err != nil {
		return err
	}
	if g == s.seen {
		return nil
	}
	if err := s.Fact.Reload(ctx); err != nil {
		return err
	}
	s.seen = g
	return nil
}

// Compact implements memory.Memory on the latest facts.
func (s *sharedFact) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, nil, err
	}
	return s.Fact.Compact(ctx, msgs)
}

// Recall implements memory.Memory on the latest facts.
func (s *sharedFact) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.Fact.Recall(ctx, query, k)
}

// ForgetMatching implements memory.Forgetter on the latest facts, so a
// request to forget reaches a fact another host stored since the last read.
func (s *sharedFact) ForgetMatching(ctx context.Context, instruction string, dryRun bool) ([]memory.Record, error) {
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	return s.Fact.ForgetMatching(ctx, instruction, dryRun)
}

// Close stops background work and closes the database.
func (s *sharedFact) Close() error {
	return errors.Join(s.Fact.Close(), s.store.Close())
}
