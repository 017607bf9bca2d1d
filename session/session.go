// Package session keeps conversations across processes: a Store appends a
// session's messages as they happen and loads them back, lists, forks,
// prunes, deletes and searches them. The embedded default is an SQLite
// file (package session/sqlitestore, a package of its own so that this one links
// no database); package sessiontest is the conformance suite any Store
// must pass.
//
//	st, err := sqlitestore.Open("sessions.db", sqlitestore.Options{})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	k := session.Key{User: "ada", Session: "support"}
//	stored, err := session.Messages(ctx, st, k) // nil for a new session
//	history := append([]llm.Message{llm.SystemText(system)}, stored...)
//	res, err := agent.RunMessages(ctx, append(history, llm.UserText(prompt)))
//	_, err = st.Append(ctx, k, res.Messages[len(history):]...) // the turn
//
// autoagent.Runtime.Continue does exactly this.
//
// Messages are numbered from 1 in the order they were appended (Seq); an
// Append is atomic (all of its messages or none) and two processes
// appending to one session lose nothing and keep each writer's order.
package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

// Key names a session: its user (a scope; "" for a single-user program)
// and its name.
type Key struct {
	User    string `json:"user,omitempty"`
	Session string `json:"session"`
}

func (k Key) String() string {
	if k.User == "" {
		return k.Session
	}
	return k.User + "/" + k.Session
}

// maxKeyLen bounds a user or session name, in bytes.
const maxKeyLen = 256

// Validate reports whether k can name a session: a session name is
// required, and both names are at most 256 bytes of valid UTF-8 without
// control characters.
func (k Key) Validate() error {
	if k.Session == "" {
		return fmt.Errorf("%w: a session needs a name", ErrInvalidKey)
	}
	for _, f := range []struct{ what, s string }{{"user", k.User}, {"session", k.Session}} {
		if len(f.s) > maxKeyLen {
			return fmt.Errorf("%w: %s name of %d bytes, more than %d", ErrInvalidKey, f.what, len(f.s), maxKeyLen)
		}
		if !utf8.ValidString(f.s) || strings.ContainsFunc(f.s, unicode.IsControl) {
			return fmt.Errorf("%w: %s name %q holds a control character or invalid UTF-8", ErrInvalidKey, f.what, f.s)
		}
	}
	return nil
}

// Entry is one stored message.
type Entry struct {
	Seq     int64       `json:"seq"`  // 1, 2, … in append order
	Time    time.Time   `json:"time"` // when it was appended
	Message llm.Message `json:"message"`
}

// Info describes a session.
type Info struct {
	Key
	Messages int       `json:"messages"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"` // the last append
	// ForkedFrom and ForkedAt say where a forked session came from: its
	// first ForkedAt messages are a copy of ForkedFrom's.
	ForkedFrom *Key  `json:"forked_from,omitempty"`
	ForkedAt   int64 `json:"forked_at,omitempty"`
}

// Hit is a message a search found, with its session and BM25 score.
type Hit struct {
	Key
	Entry
	Score float64 `json:"score"`
}

// PruneOptions chooses what Prune removes. Zero fields remove nothing.
type PruneOptions struct {
	// User and Session limit pruning to one user's sessions, or one
	// session (empty: every user, every session).
	User, Session string
	// Before removes the messages appended before it.
	Before time.Time
	// KeepLast keeps at most this many of each session's latest messages.
	KeepLast int
}

// Store is a persistent conversation store. Every method is safe for
// concurrent use, also by several processes sharing the store. A Store
// kept in files may also have a method Files() []string naming them, so
// that a runtime keeps its sandboxed tools out of them
// (autoagent.Config.Protects; sqlitestore.Store has it).
type Store interface {
	// Append stores msgs at the end of session k, creating it, all or
	// none, and returns their entries.
	Append(ctx context.Context, k Key, msgs ...llm.Message) ([]Entry, error)
	// Load returns the session's messages in order; ErrNotFound when there
	// is no such session.
	Load(ctx context.Context, k Key) ([]Entry, error)
	// Info describes one session; ErrNotFound when there is none.
	Info(ctx context.Context, k Key) (Info, error)
	// List describes the sessions of user (every user's when user is ""
	// and all is true), most recently updated first.
	List(ctx context.Context, user string, all bool) ([]Info, error)
	// Fork copies the first at messages of from into a new session to
	// (at 0: all of them). ErrExists when to exists; ErrNotFound when from
	// does not; an at past from's end is an error.
	Fork(ctx context.Context, from Key, at int64, to Key) (Info, error)
	// Delete removes a session; ErrNotFound when there is none.
	Delete(ctx context.Context, k Key) error
	// Prune removes messages as opts says, and sessions left empty. It
	// returns how many messages it removed. A session that loses messages
	// holding untrusted content (a tool result framed as untrusted, a
	// system message carrying the taint sentinel) keeps a system message
	// starting with [PruneTaintNote] before what is left, so a run that
	// continues it is still tainted; Prune never removes that note but
	// with the session's last other message.
	Prune(ctx context.Context, opts PruneOptions) (int, error)
	// Search ranks the messages of session k (of every session of k.User
	// when k.Session is "") against query with BM25, best first, at most
	// limit (10 when 0).
	Search(ctx context.Context, k Key, query string, limit int) ([]Hit, error)
	// Close releases the store.
	Close() error
}

var (
	// ErrNotFound is wrapped by the errors of operations on a session that
	// does not exist.
	ErrNotFound = errors.New("session: no such session")
	// ErrExists is wrapped by Fork's error when its target exists.
	ErrExists = errors.New("session: session exists")
	// ErrInvalidKey is wrapped by the errors of a Key that cannot name a
	// session.
	ErrInvalidKey = errors.New("session: invalid key")
)

// Messages returns the messages of session k, nil when it does not exist
// yet: the history to continue it with.
func Messages(ctx context.Context, st Store, k Key) ([]llm.Message, error) {
	entries, err := st.Load(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out, nil
}

// TurnOf returns the messages a run added to a conversation for prompt:
// the prompt's user message and everything after it. The run's transcript
// may not extend the history it was given (a memory compacted it at the
// start), so the turn is found from its end: from the last user message
// whose text is prompt. It returns nil when there is none.
func TurnOf(msgs []llm.Message, prompt string) []llm.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && msgs[i].Text() == prompt {
			return msgs[i:]
		}
	}
	return nil
}
