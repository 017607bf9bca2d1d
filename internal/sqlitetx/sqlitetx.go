// Package sqlitetx runs a write transaction on an SQLite database the way
// the module's stores need it: the write lock taken first (BEGIN
// IMMEDIATE), so that what the transaction reads is what it writes over,
// and a rollback that happens even when the caller's context is gone.
//
//	err := sqlitetx.Write(ctx, db, func(c *sql.Conn) error {
//		_, err := c.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
//		return err
//	})
//
// The stores that use it (memory/sqlitestore, session/sqlitestore) hold
// their own mutex around it: database/sql's pool would otherwise hand two
// goroutines two connections that wait on each other's lock.
package sqlitetx

import (
	"context"
	"database/sql"
)

// Error is a failure of the transaction itself (taking a connection,
// beginning, committing), as against an error of the caller's fn, which
// Write returns as it is.
type Error struct {
	Op  string // "connect", "begin write" or "commit"
	Err error
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Write runs fn in an IMMEDIATE transaction on one connection of db and
// commits it; an error from fn, or from the commit, rolls it back. A
// failure of the transaction itself is an *Error; fn's error comes back
// unchanged.
func Write(ctx context.Context, db *sql.DB, fn func(*sql.Conn) error) (err error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return &Error{Op: "connect", Err: err}
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return &Error{Op: "begin write", Err: err}
	}
	defer func() {
		if err != nil {
			// The connection may be gone with ctx; a background context
			// still rolls back so the next user of the connection starts
			// clean.
			_, _ = c.ExecContext(context.Background(), `ROLLBACK`)
		}
	}()
	if err := fn(c); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, `COMMIT`); err != nil {
		return &Error{Op: "commit", Err: err}
	}
	return nil
}
