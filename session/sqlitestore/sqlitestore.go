// Package sqlitestore is the embedded session.Store: one SQLite file in WAL
// mode (modernc.org/sqlite, pure Go). It is a package of its own so that
// importing package session, for its Key and Store, links no database.
//
//	st, err := sqlitestore.Open("sessions.db", sqlitestore.Options{})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	rt, err := autoagent.New(ctx, autoagent.Config{Sessions: st /* … */})
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/autoagent-go/autoagent/internal/bm25"
	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/internal/sqlitetx"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/session"
)

// Options configures Open. The zero value works.
type Options struct {
	// BusyTimeout is how long a write waits for another process's write
	// to finish; DefaultBusyTimeout when zero.
	BusyTimeout time.Duration
	// Now is the clock entries are stamped with; time.Now when nil.
	Now func() time.Time
}

// DefaultBusyTimeout is Options.BusyTimeout's default.
const DefaultBusyTimeout = 10 * time.Second

// Store is the embedded session.Store: one SQLite file in WAL mode, shared
// safely by the goroutines of a process and by several processes. A
// commit is durable against the process dying (kill -9 included): what
// Append returned is there when the file is opened again.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
	wmu  sync.Mutex // one writer per process; other processes wait in SQLite
}

var _ session.Store = (*Store)(nil)

const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
	user        TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	created     INTEGER NOT NULL,
	updated     INTEGER NOT NULL,
	next_seq    INTEGER NOT NULL,
	forked_user TEXT,
	forked_name TEXT,
	forked_at   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (user, name)
);
CREATE TABLE IF NOT EXISTS messages (
	user    TEXT    NOT NULL,
	name    TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	time    INTEGER NOT NULL,
	role    TEXT    NOT NULL,
	text    TEXT,
	message TEXT,
	PRIMARY KEY (user, name, seq)
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '1');
`

// CorruptError is returned by Open for a file that is not a session store
// (not an SQLite database, or tables of another layout). The file is left
// untouched.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("session: %s is not a readable session store (%v); move it aside to start a new one", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Open opens the store at path, creating the file and its tables when
// missing.
func Open(path string, opts Options) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("session: store path %q must be a file name without '?'", path)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)", path, busy.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) init() error {
	ctx := context.Background()
	corrupt := func(err error) error { return &CorruptError{Path: s.path, Err: err} }
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		msg := err.Error()
		if _, statErr := os.Stat(s.path); statErr == nil && (strings.Contains(msg, "not a database") || strings.Contains(msg, "malformed")) {
			return corrupt(err)
		}
		return fmt.Errorf("session: create tables in %s: %w", s.path, err)
	}
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return corrupt(fmt.Errorf("read schema version: %w", err))
	}
	if v != schemaVersion {
		return corrupt(fmt.Errorf("schema version %d; this build reads version %d", v, schemaVersion))
	}
	if _, err := s.db.ExecContext(ctx, `SELECT user, name, created, updated, next_seq, forked_user, forked_name, forked_at FROM sessions LIMIT 0`); err != nil {
		return corrupt(err)
	}
	if _, err := s.db.ExecContext(ctx, `SELECT user, name, seq, time, role, text, message FROM messages LIMIT 0`); err != nil {
		return corrupt(err)
	}
	return nil
}

// Close closes the database; every Append that returned is committed.
func (s *Store) Close() error { return s.db.Close() }

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Files are the files that hold the store: the database and the log
// files SQLite keeps beside it, which it replays into the database.
// autoagent.Config.Protects keeps sandboxed tools out of them.
func (s *Store) Files() []string {
	return []string{s.path, s.path + "-wal", s.path + "-shm", s.path + "-journal"}
}

// pruneNote is the message Prune leaves (session.PruneTaintNote).
var pruneNote = session.PruneTaintNote + "\n" + marker.TaintSentinel

// taintSentinel, in a system message, says the conversation once held
// untrusted content (the loop's marker, internal/marker).
const taintSentinel = marker.TaintSentinel

// isTainted reports whether m carries untrusted content or the sentinel.
func isTainted(m llm.Message) bool { return marker.Tainted(m) }

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// write runs fn in an IMMEDIATE transaction (the database's write lock
// first, so what fn reads is what it writes over).
func (s *Store) write(ctx context.Context, fn func(q querier) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := sqlitetx.Write(ctx, s.db, func(c *sql.Conn) error { return fn(c) })
	if txErr := (*sqlitetx.Error)(nil); errors.As(err, &txErr) {
		return fmt.Errorf("session: %s to %s: %w", txErr.Op, s.path, txErr.Err)
	}
	return err
}

// read runs fn in a read transaction: one consistent snapshot.
func (s *Store) read(ctx context.Context, fn func(q querier) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

func stamp(t time.Time) int64 { return t.UnixNano() }

func unstamp(n int64) time.Time { return time.Unix(0, n) }

// Append implements session.Store.
func (s *Store) Append(ctx context.Context, k session.Key, msgs ...llm.Message) ([]session.Entry, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	rows := make([]row, len(msgs))
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("session: message %d of the append: %w", i, err)
		}
		r, err := encode(m)
		if err != nil {
			return nil, fmt.Errorf("session: message %d of the append: %w", i, err)
		}
		rows[i] = r
	}
	var out []session.Entry
	err := s.write(ctx, func(q querier) error {
		now := s.now()
		if _, err := q.ExecContext(ctx, `INSERT OR IGNORE INTO sessions (user, name, created, updated, next_seq) VALUES (?, ?, ?, ?, 1)`,
			k.User, k.Session, stamp(now), stamp(now)); err != nil {
			return fmt.Errorf("session: create %s: %w", k, err)
		}
		var next int64
		if err := q.QueryRowContext(ctx, `SELECT next_seq FROM sessions WHERE user = ? AND name = ?`, k.User, k.Session).Scan(&next); err != nil {
			return fmt.Errorf("session: read %s: %w", k, err)
		}
		out = make([]session.Entry, len(msgs))
		for i, m := range msgs {
			seq := next + int64(i)
			if _, err := q.ExecContext(ctx, `INSERT INTO messages (user, name, seq, time, role, text, message) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				k.User, k.Session, seq, stamp(now), rows[i].role, rows[i].text, rows[i].doc); err != nil {
				return fmt.Errorf("session: append to %s: %w", k, err)
			}
			out[i] = session.Entry{Seq: seq, Time: now, Message: m.Clone()}
		}
		_, err := q.ExecContext(ctx, `UPDATE sessions SET next_seq = ?, updated = ? WHERE user = ? AND name = ?`,
			next+int64(len(msgs)), stamp(now), k.User, k.Session)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Load implements session.Store.
func (s *Store) Load(ctx context.Context, k session.Key) ([]session.Entry, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	var out []session.Entry
	err := s.read(ctx, func(q querier) error {
		if _, err := info(ctx, q, k); err != nil {
			return err
		}
		var err error
		out, err = entries(ctx, q, k, 0)
		return err
	})
	return out, err
}

// entries reads the messages of k, the first upTo of them (all when 0).
func entries(ctx context.Context, q querier, k session.Key, upTo int64) ([]session.Entry, error) {
	query := `SELECT seq, time, role, text, message FROM messages WHERE user = ? AND name = ? ORDER BY seq`
	args := []any{k.User, k.Session}
	if upTo > 0 {
		query = `SELECT seq, time, role, text, message FROM messages WHERE user = ? AND name = ? AND seq <= ? ORDER BY seq`
		args = append(args, upTo)
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("session: load %s: %w", k, err)
	}
	defer rows.Close()
	out := []session.Entry{}
	for rows.Next() {
		var (
			e    session.Entry
			t    int64
			role string
			text sql.NullString
			doc  []byte
		)
		if err := rows.Scan(&e.Seq, &t, &role, &text, &doc); err != nil {
			return nil, fmt.Errorf("session: load %s: %w", k, err)
		}
		m, err := decode(role, text, doc)
		if err != nil {
			return nil, fmt.Errorf("session: %s message %d is not a message: %w", k, e.Seq, err)
		}
		e.Message = m
		e.Time = unstamp(t)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: load %s: %w", k, err)
	}
	return out, nil
}

// Info implements session.Store.
func (s *Store) Info(ctx context.Context, k session.Key) (session.Info, error) {
	if err := k.Validate(); err != nil {
		return session.Info{}, err
	}
	var out session.Info
	err := s.read(ctx, func(q querier) error {
		var err error
		out, err = info(ctx, q, k)
		return err
	})
	return out, err
}

const infoColumns = `s.user, s.name, s.created, s.updated, s.forked_user, s.forked_name, s.forked_at,
	(SELECT COUNT(*) FROM messages m WHERE m.user = s.user AND m.name = s.name)`

func scanInfo(sc interface{ Scan(...any) error }) (session.Info, error) {
	var (
		in               session.Info
		created, updated int64
		fuser, fname     sql.NullString
	)
	if err := sc.Scan(&in.User, &in.Session, &created, &updated, &fuser, &fname, &in.ForkedAt, &in.Messages); err != nil {
		return session.Info{}, err
	}
	in.Created, in.Updated = unstamp(created), unstamp(updated)
	if fname.Valid {
		in.ForkedFrom = &session.Key{User: fuser.String, Session: fname.String}
	}
	return in, nil
}

func info(ctx context.Context, q querier, k session.Key) (session.Info, error) {
	in, err := scanInfo(q.QueryRowContext(ctx, `SELECT `+infoColumns+` FROM sessions s WHERE s.user = ? AND s.name = ?`, k.User, k.Session))
	if errors.Is(err, sql.ErrNoRows) {
		return session.Info{}, fmt.Errorf("%w: %s", session.ErrNotFound, k)
	}
	if err != nil {
		return session.Info{}, fmt.Errorf("session: read %s: %w", k, err)
	}
	return in, nil
}

// List implements session.Store.
func (s *Store) List(ctx context.Context, user string, all bool) ([]session.Info, error) {
	query := `SELECT ` + infoColumns + ` FROM sessions s WHERE s.user = ? ORDER BY s.updated DESC, s.user, s.name`
	args := []any{user}
	if all && user == "" {
		query = `SELECT ` + infoColumns + ` FROM sessions s ORDER BY s.updated DESC, s.user, s.name`
		args = nil
	}
	out := []session.Info{}
	err := s.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("session: list: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			in, err := scanInfo(rows)
			if err != nil {
				return fmt.Errorf("session: list: %w", err)
			}
			out = append(out, in)
		}
		return rows.Err()
	})
	return out, err
}

// Fork implements session.Store.
func (s *Store) Fork(ctx context.Context, from session.Key, at int64, to session.Key) (session.Info, error) {
	for _, k := range []session.Key{from, to} {
		if err := k.Validate(); err != nil {
			return session.Info{}, err
		}
	}
	if at < 0 {
		return session.Info{}, fmt.Errorf("session: fork of %s at message %d: the position must be positive (0 for all)", from, at)
	}
	var out session.Info
	err := s.write(ctx, func(q querier) error {
		if _, err := info(ctx, q, from); err != nil {
			return err
		}
		if _, err := info(ctx, q, to); err == nil {
			return fmt.Errorf("%w: %s", session.ErrExists, to)
		} else if !errors.Is(err, session.ErrNotFound) {
			return err
		}
		var last int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE user = ? AND name = ?`, from.User, from.Session).Scan(&last); err != nil {
			return fmt.Errorf("session: read %s: %w", from, err)
		}
		if at == 0 {
			at = last
		}
		if at > last {
			return fmt.Errorf("session: fork of %s at message %d: it has messages up to %d", from, at, last)
		}
		now := s.now()
		if _, err := q.ExecContext(ctx, `INSERT INTO sessions (user, name, created, updated, next_seq, forked_user, forked_name, forked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			to.User, to.Session, stamp(now), stamp(now), at+1, from.User, from.Session, at); err != nil {
			return fmt.Errorf("session: create %s: %w", to, err)
		}
		// Pruning may have removed early messages: seqs are copied as
		// they are, so "message N" means the same in both.
		if _, err := q.ExecContext(ctx, `INSERT INTO messages (user, name, seq, time, role, text, message)
			SELECT ?, ?, seq, time, role, text, message FROM messages WHERE user = ? AND name = ? AND seq <= ?`,
			to.User, to.Session, from.User, from.Session, at); err != nil {
			return fmt.Errorf("session: copy %s into %s: %w", from, to, err)
		}
		var err error
		out, err = info(ctx, q, to)
		return err
	})
	return out, err
}

// Delete implements session.Store.
func (s *Store) Delete(ctx context.Context, k session.Key) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return s.write(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, `DELETE FROM sessions WHERE user = ? AND name = ?`, k.User, k.Session)
		if err != nil {
			return fmt.Errorf("session: delete %s: %w", k, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %s", session.ErrNotFound, k)
		}
		_, err = q.ExecContext(ctx, `DELETE FROM messages WHERE user = ? AND name = ?`, k.User, k.Session)
		return err
	})
}

// Prune implements session.Store. A session that loses messages holding
// untrusted content keeps a system message in their place (see
// [session.PruneTaintNote]), at the sequence number of the last message removed;
// that note is never pruned itself, and goes with the session's last
// other message.
func (s *Store) Prune(ctx context.Context, opts session.PruneOptions) (int, error) {
	if opts.KeepLast < 0 {
		return 0, fmt.Errorf("session: prune: KeepLast %d is negative", opts.KeepLast)
	}
	if opts.Before.IsZero() && opts.KeepLast == 0 {
		return 0, nil
	}
	scope := `1`
	var scopeArgs []any
	if opts.User != "" || opts.Session != "" {
		scope = `user = ?`
		scopeArgs = append(scopeArgs, opts.User)
		if opts.Session != "" {
			scope += ` AND name = ?`
			scopeArgs = append(scopeArgs, opts.Session)
		}
	}
	var cuts []string
	var cutArgs []any
	if !opts.Before.IsZero() {
		cuts = append(cuts, `time < ?`)
		cutArgs = append(cutArgs, stamp(opts.Before))
	}
	if opts.KeepLast > 0 {
		cuts = append(cuts, `seq <= (SELECT s.next_seq - 1 - ? FROM sessions s WHERE s.user = messages.user AND s.name = messages.name)`)
		cutArgs = append(cutArgs, opts.KeepLast)
	}
	// The messages removed: those the options cut, in scope, but a note.
	where := scope + ` AND (` + strings.Join(cuts, ` OR `) + `) AND NOT (role = 'system' AND text IS ?)`
	args := append(append(append([]any(nil), scopeArgs...), cutArgs...), pruneNote)
	removed := 0
	err := s.write(ctx, func(q querier) error {
		removed = 0
		tainted, err := prunedTaint(ctx, q, where, args)
		if err != nil {
			return err
		}
		res, err := q.ExecContext(ctx, `DELETE FROM messages WHERE `+where, args...)
		if err != nil {
			return fmt.Errorf("session: prune: %w", err)
		}
		n, _ := res.RowsAffected()
		removed = int(n)
		for k, seq := range tainted {
			if _, err := q.ExecContext(ctx, `INSERT INTO messages (user, name, seq, time, role, text, message)
				SELECT ?, ?, ?, ?, 'system', ?, NULL
				WHERE NOT EXISTS (SELECT 1 FROM messages WHERE user = ? AND name = ? AND role = 'system' AND text IS ?)`,
				k.User, k.Session, seq, stamp(s.now()), pruneNote, k.User, k.Session, pruneNote); err != nil {
				return fmt.Errorf("session: prune: keep the taint of %s: %w", k, err)
			}
		}
		// A session left with its note alone is empty: nothing that read
		// the content remains.
		_, err = q.ExecContext(ctx, `DELETE FROM messages WHERE `+scope+` AND role = 'system' AND text IS ? AND NOT EXISTS (
			SELECT 1 FROM messages m WHERE m.user = messages.user AND m.name = messages.name AND NOT (m.role = 'system' AND m.text IS ?))`,
			append(append([]any(nil), scopeArgs...), pruneNote, pruneNote)...)
		if err != nil {
			return fmt.Errorf("session: prune: %w", err)
		}
		_, err = q.ExecContext(ctx, `DELETE FROM sessions WHERE `+scope+` AND NOT EXISTS (
			SELECT 1 FROM messages m WHERE m.user = sessions.user AND m.name = sessions.name)`, scopeArgs...)
		return err
	})
	return removed, err
}

// prunedTaint returns, for each session of which the messages matching
// where hold untrusted content, the last sequence number of such a
// message: free once they are removed, and before every message kept.
// The database picks the messages that may hold a marker; each is decoded
// and checked as the loop would.
func prunedTaint(ctx context.Context, q querier, where string, args []any) (map[session.Key]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT user, name, seq, role, text, message FROM messages WHERE `+where+`
		AND (instr(COALESCE(text, CAST(message AS TEXT)), ?) > 0 OR instr(COALESCE(text, CAST(message AS TEXT)), ?) > 0)`,
		append(append([]any(nil), args...), "EXTERNAL UNTRUSTED CONTENT", taintSentinel)...)
	if err != nil {
		return nil, fmt.Errorf("session: prune: %w", err)
	}
	defer rows.Close()
	out := map[session.Key]int64{}
	for rows.Next() {
		var (
			k    session.Key
			seq  int64
			role string
			text sql.NullString
			doc  []byte
		)
		if err := rows.Scan(&k.User, &k.Session, &seq, &role, &text, &doc); err != nil {
			return nil, fmt.Errorf("session: prune: %w", err)
		}
		// A message that cannot be read counts as tainted.
		if m, err := decode(role, text, doc); err != nil || isTainted(m) {
			out[k] = max(out[k], seq)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: prune: %w", err)
	}
	return out, nil
}

// Search implements session.Store.
func (s *Store) Search(ctx context.Context, k session.Key, query string, limit int) ([]session.Hit, error) {
	if k.Session != "" {
		if err := k.Validate(); err != nil {
			return nil, err
		}
	}
	if limit <= 0 {
		limit = 10
	}
	var keys []session.Key
	var all []session.Entry
	err := s.read(ctx, func(q querier) error {
		var sessions []session.Key
		if k.Session != "" {
			if _, err := info(ctx, q, k); err != nil {
				return err
			}
			sessions = []session.Key{k}
		} else {
			rows, err := q.QueryContext(ctx, `SELECT name FROM sessions WHERE user = ? ORDER BY name`, k.User)
			if err != nil {
				return fmt.Errorf("session: search: %w", err)
			}
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					rows.Close()
					return fmt.Errorf("session: search: %w", err)
				}
				sessions = append(sessions, session.Key{User: k.User, Session: name})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("session: search: %w", err)
			}
		}
		for _, sk := range sessions {
			es, err := entries(ctx, q, sk, 0)
			if err != nil {
				return err
			}
			for range es {
				keys = append(keys, sk)
			}
			all = append(all, es...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rank(keys, all, query, limit), nil
}

// rank scores entries against query with BM25 (memory's ranking), best
// first, ties in store order.
func rank(keys []session.Key, all []session.Entry, query string, limit int) []session.Hit {
	x := bm25.New()
	for i, e := range all {
		x.Add(int64(i+1), searchText(e.Message))
	}
	scored := x.ScoreList(query)
	slicesSortScored(scored)
	out := []session.Hit{}
	for _, sc := range scored {
		if len(out) == limit {
			break
		}
		i := sc.ID - 1
		out = append(out, session.Hit{Key: keys[i], Entry: all[i], Score: sc.Score})
	}
	return out
}

func slicesSortScored(list []bm25.Scored) {
	slices.SortFunc(list, func(a, b bm25.Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// row is a message as stored: a message of one plain text part (most of a
// conversation) as its role and text, any other as its JSON document, so
// loading a long session decodes little JSON.
type row struct {
	role string
	text sql.NullString
	doc  []byte
}

func encode(m llm.Message) (row, error) {
	if len(m.Parts) == 1 {
		if p := m.Parts[0]; p.Type == llm.PartText && p.Signature == "" && p.Redacted == "" && p.Image == nil && p.ToolCall == nil && p.ToolResult == nil {
			return row{role: string(m.Role), text: sql.NullString{String: p.Text, Valid: true}}, nil
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return row{}, err
	}
	return row{role: string(m.Role), doc: b}, nil
}

func decode(role string, text sql.NullString, doc []byte) (llm.Message, error) {
	if text.Valid {
		return llm.Message{Role: llm.Role(role), Parts: []llm.Part{{Type: llm.PartText, Text: text.String}}}, nil
	}
	var m llm.Message
	if err := json.Unmarshal(doc, &m); err != nil {
		return llm.Message{}, err
	}
	return m, nil
}

// searchText is what search indexes of a message: its text, the tools it
// called with their arguments, and the results it carries.
func searchText(m llm.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			b.WriteString(p.Text)
		case llm.PartToolCall:
			if p.ToolCall != nil {
				b.WriteString(p.ToolCall.Name + " " + string(p.ToolCall.Arguments))
			}
		case llm.PartToolResult:
			if p.ToolResult != nil {
				b.WriteString(p.ToolResult.Name + " " + p.ToolResult.Content)
			}
		default:
			continue
		}
		b.WriteByte('\n')
	}
	return b.String()
}
