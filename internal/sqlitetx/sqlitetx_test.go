package sqlitetx_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/autoagent-go/autoagent/internal/sqlitetx"
)

func open(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func count(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func insert(ctx context.Context) func(*sql.Conn) error {
	return func(c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
		return err
	}
}

// What fn wrote is committed; an error of fn rolls everything back and
// comes back unchanged, not as an *Error.
func TestWriteCommitsOrRollsBack(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := sqlitetx.Write(ctx, db, insert(ctx)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db); n != 1 {
		t.Fatalf("after a committed write: %d rows, want 1", n)
	}
	mine := errors.New("mine")
	err := sqlitetx.Write(ctx, db, func(c *sql.Conn) error {
		if err := insert(ctx)(c); err != nil {
			return err
		}
		return mine
	})
	if err != mine {
		t.Errorf("fn's error came back as %v; want it unchanged", err)
	}
	if n := count(t, db); n != 1 {
		t.Errorf("after a failed write: %d rows, want 1 (rolled back)", n)
	}
	// The connection went back to the pool clean: the next write works.
	if err := sqlitetx.Write(ctx, db, insert(ctx)); err != nil {
		t.Fatalf("the write after a rollback: %v", err)
	}
	if n := count(t, db); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

// A context cancelled inside fn still rolls back: nothing fn wrote
// stays, and the database is not left locked.
func TestWriteRollsBackWhenTheContextIsGone(t *testing.T) {
	db := open(t)
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	err := sqlitetx.Write(ctx, db, func(c *sql.Conn) error {
		if err := insert(context.Background())(c); err != nil {
			return err
		}
		cancel()
		return ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	bg := context.Background()
	if err := sqlitetx.Write(bg, db, insert(bg)); err != nil {
		t.Fatalf("the next write: %v (left in a transaction?)", err)
	}
	if n := count(t, db); n != 1 {
		t.Errorf("%d rows, want 1: the cancelled write was kept", n)
	}
}

// A failure of the transaction itself is an *Error naming the step.
func TestWriteNamesTheFailedStep(t *testing.T) {
	db := open(t)
	db.Close()
	err := sqlitetx.Write(context.Background(), db, func(*sql.Conn) error { return nil })
	var te *sqlitetx.Error
	if !errors.As(err, &te) || te.Op != "connect" {
		t.Errorf("on a closed database: %v; want an *Error with Op connect", err)
	}

	db = open(t)
	hold, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if _, err := hold.ExecContext(context.Background(), `PRAGMA busy_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	defer hold.ExecContext(context.Background(), `ROLLBACK`)
	err = sqlitetx.Write(context.Background(), db, func(*sql.Conn) error { return nil })
	if !errors.As(err, &te) || te.Op != "begin write" {
		t.Errorf("while another connection holds the write lock: %v; want an *Error with Op begin write", err)
	}
}
