package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/autoagent-go/autoagent/internal/sqlitetx"
	"github.com/autoagent-go/autoagent/memory"
)

// DefaultBusyTimeout is how long a write waits for another process's
// write to finish when Options.BusyTimeout is zero.
const DefaultBusyTimeout = 10 * time.Second

// Options configures [Open]. The zero value works.
type Options struct {
	// BusyTimeout is how long a write waits for another connection's or
	// process's write before failing (default 10s).
	BusyTimeout time.Duration
}

// Store is a memory.FactStore on an SQLite file. It is safe for
// concurrent use, by goroutines and by processes sharing the file.
type Store struct {
	db   *sql.DB
	path string
	wmu  sync.Mutex // one writer per process: the others wait here, not in SQLite's busy loop
}

var _ memory.FactStore = (*Store)(nil)

// schemaVersion is the layout this package writes. A file with a newer
// layout is refused rather than misread.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS facts (
	id            INTEGER PRIMARY KEY,
	text          TEXT    NOT NULL,
	subject       TEXT    NOT NULL DEFAULT '',
	source        TEXT    NOT NULL,
	valid_from    TEXT    NOT NULL,
	invalid_at    TEXT,
	superseded_by INTEGER NOT NULL DEFAULT 0,
	updated       TEXT    NOT NULL,
	tainted       INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS vectors (
	id  INTEGER PRIMARY KEY,
	vec BLOB    NOT NULL
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '1'), ('next_id', '1'), ('generation', '0');
`

// Open opens the store at path, creating the file and its tables when
// missing. A file that is not an SQLite database, or holds tables of
// another layout, is a *memory.CorruptStoreError naming it; the file is
// left untouched.
func Open(path string, opts Options) (*Store, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlitestore: database path %q must not contain '?'", path)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	dsn := fmt.Sprintf("%s?_busy_timeout=%d&_journal_mode=WAL&_synchronous=NORMAL", path, busy.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.init(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// init creates the tables and checks the layout.
func (s *Store) init() error {
	ctx := context.Background()
	corrupt := func(err error) error { return &memory.CorruptStoreError{Path: s.path, Err: err} }
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		if _, statErr := os.Stat(s.path); statErr == nil && isNotADatabase(err) {
			return corrupt(err)
		}
		return fmt.Errorf("sqlitestore: create tables in %s: %w", s.path, err)
	}
	var v string
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v); err != nil {
		return corrupt(fmt.Errorf("read schema version: %w", err))
	}
	n, err := strconv.Atoi(v)
	if err != nil || n > schemaVersion {
		return corrupt(fmt.Errorf("schema version %q; this build reads version %d", v, schemaVersion))
	}
	// A table of another layout surfaces here, not at the first update.
	if _, err := s.db.ExecContext(ctx, `SELECT id, text, subject, source, valid_from, invalid_at, superseded_by, updated, tainted FROM facts LIMIT 0`); err != nil {
		return corrupt(err)
	}
	return nil
}

func isNotADatabase(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "file is not a database") || strings.Contains(msg, "database disk image is malformed")
}

// Close closes the database. Pending writes have already been committed.
func (s *Store) Close() error { return s.db.Close() }

// querier is what both *sql.Conn and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Load implements memory.FactStore: one consistent snapshot.
func (s *Store) Load(ctx context.Context) (*memory.FactState, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	defer tx.Rollback()
	return s.load(ctx, tx)
}

func (s *Store) load(ctx context.Context, q querier) (*memory.FactState, error) {
	st := &memory.FactState{Facts: []memory.Record{}}
	meta, err := readMeta(ctx, q)
	if err != nil {
		return nil, err
	}
	st.Identity = meta["identity"]
	if st.NextID, err = strconv.ParseInt(meta["next_id"], 10, 64); err != nil {
		return nil, &memory.CorruptStoreError{Path: s.path, Err: fmt.Errorf("next_id %q: %w", meta["next_id"], err)}
	}
	rows, err := q.QueryContext(ctx, `SELECT id, text, subject, source, valid_from, invalid_at, superseded_by, updated, tainted FROM facts ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: read facts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r         memory.Record
			from, upd string
			invalid   sql.NullString
			source    string
		)
		if err := rows.Scan(&r.ID, &r.Text, &r.Subject, &source, &from, &invalid, &r.SupersededBy, &upd, &r.Tainted); err != nil {
			return nil, fmt.Errorf("sqlitestore: read facts: %w", err)
		}
		r.Source = memory.Source(source)
		if r.ValidFrom, err = parseTime(from); err == nil {
			if r.Updated, err = parseTime(upd); err == nil && invalid.Valid {
				r.InvalidAt, err = parseTime(invalid.String)
			}
		}
		if err != nil {
			return nil, &memory.CorruptStoreError{Path: s.path, Err: fmt.Errorf("fact %d: %w", r.ID, err)}
		}
		st.Facts = append(st.Facts, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: read facts: %w", err)
	}
	return st, nil
}

func readMeta(ctx context.Context, q querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: read meta: %w", err)
	}
	defer rows.Close()
	m := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("sqlitestore: read meta: %w", err)
		}
		m[k] = v
	}
	return m, rows.Err()
}

// Update implements memory.FactStore. It takes the database's write lock
// first (BEGIN IMMEDIATE), so the state fn sees is the latest committed by
// any process and nobody else writes until it is stored. Only the rows
// that changed are written.
func (s *Store) Update(ctx context.Context, fn func(*memory.FactState) error) (*memory.FactState, error) {
	var out *memory.FactState
	err := s.write(ctx, func(c *sql.Conn) error {
		st, err := s.load(ctx, c)
		if err != nil {
			return err
		}
		before := make(map[int64]memory.Record, len(st.Facts))
		for _, r := range st.Facts {
			before[r.ID] = r
		}
		if err := fn(st); err != nil {
			return err
		}
		normalize(st)
		for _, r := range st.Facts {
			if old, ok := before[r.ID]; ok && equalRecord(old, r) {
				delete(before, r.ID)
				continue
			}
			delete(before, r.ID)
			if _, err := c.ExecContext(ctx, `INSERT OR REPLACE INTO facts (id, text, subject, source, valid_from, invalid_at, superseded_by, updated, tainted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, r.Text, r.Subject, string(r.Source), formatTime(r.ValidFrom), nullTime(r.InvalidAt), r.SupersededBy, formatTime(r.Updated), r.Tainted); err != nil {
				return fmt.Errorf("sqlitestore: write fact %d: %w", r.ID, err)
			}
		}
		for id := range before { // erased
			if _, err := c.ExecContext(ctx, `DELETE FROM facts WHERE id = ?`, id); err != nil {
				return fmt.Errorf("sqlitestore: delete fact %d: %w", id, err)
			}
			if _, err := c.ExecContext(ctx, `DELETE FROM vectors WHERE id = ?`, id); err != nil {
				return fmt.Errorf("sqlitestore: delete vector %d: %w", id, err)
			}
		}
		if err := setMeta(ctx, c, "identity", st.Identity); err != nil {
			return err
		}
		if err := setMeta(ctx, c, "next_id", strconv.FormatInt(st.NextID, 10)); err != nil {
			return err
		}
		out = st
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cloneState(out), nil
}

// write runs fn in an IMMEDIATE transaction on one connection and bumps
// the generation when it commits.
func (s *Store) write(ctx context.Context, fn func(*sql.Conn) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := sqlitetx.Write(ctx, s.db, func(c *sql.Conn) error {
		if err := fn(c); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`); err != nil {
			return fmt.Errorf("sqlitestore: %w", err)
		}
		return nil
	})
	if txErr := (*sqlitetx.Error)(nil); errors.As(err, &txErr) {
		return fmt.Errorf("sqlitestore: %s to %s: %w", txErr.Op, s.path, txErr.Err)
	}
	return err
}

func setMeta(ctx context.Context, q querier, key, value string) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value); err != nil {
		return fmt.Errorf("sqlitestore: write %s: %w", key, err)
	}
	return nil
}

// Generation returns a number that changes with every committed update,
// by this process or another one sharing the file.
func (s *Store) Generation(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'`).Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlitestore: read generation: %w", err)
	}
	return v, nil
}

// LoadVectors implements memory.FactStore.
func (s *Store) LoadVectors(ctx context.Context, model string) (map[int64][]float32, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: %w", err)
	}
	defer tx.Rollback()
	out := make(map[int64][]float32)
	meta, err := readMeta(ctx, tx)
	if err != nil || meta["vector_model"] != model {
		return out, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, vec FROM vectors`)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: read vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, fmt.Errorf("sqlitestore: read vectors: %w", err)
		}
		if len(b)%4 != 0 {
			return nil, &memory.CorruptStoreError{Path: s.path, Err: fmt.Errorf("vector %d has %d bytes, not a multiple of 4", id, len(b))}
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		out[id] = v
	}
	return out, rows.Err()
}

// SaveVectors implements memory.FactStore.
func (s *Store) SaveVectors(ctx context.Context, model string, vectors map[int64][]float32) error {
	return s.write(ctx, func(c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, `DELETE FROM vectors`); err != nil {
			return fmt.Errorf("sqlitestore: clear vectors: %w", err)
		}
		for id, v := range vectors {
			b := make([]byte, 4*len(v))
			for i, x := range v {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
			}
			if _, err := c.ExecContext(ctx, `INSERT INTO vectors (id, vec) VALUES (?, ?)`, id, b); err != nil {
				return fmt.Errorf("sqlitestore: write vector %d: %w", id, err)
			}
		}
		return setMeta(ctx, c, "vector_model", model)
	})
}

// normalize sorts the facts by id and makes NextID larger than every id,
// as every FactStore does after an update.
func normalize(st *memory.FactState) {
	slices.SortFunc(st.Facts, func(a, b memory.Record) int { return cmp.Compare(a.ID, b.ID) })
	if st.NextID < 1 {
		st.NextID = 1
	}
	if n := len(st.Facts); n > 0 && st.Facts[n-1].ID >= st.NextID {
		st.NextID = st.Facts[n-1].ID + 1
	}
}

func cloneState(st *memory.FactState) *memory.FactState {
	c := *st
	c.Facts = slices.Clone(st.Facts)
	return &c
}

// equalRecord compares what the table stores (times to the nanosecond,
// whatever their location).
func equalRecord(a, b memory.Record) bool {
	return a.ID == b.ID && a.Text == b.Text && a.Subject == b.Subject && a.Source == b.Source &&
		a.ValidFrom.Equal(b.ValidFrom) && a.InvalidAt.Equal(b.InvalidAt) &&
		a.SupersededBy == b.SupersededBy && a.Updated.Equal(b.Updated) && a.Tainted == b.Tainted
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("bad time " + strconv.Quote(s))
	}
	return t, nil
}
