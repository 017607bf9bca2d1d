// Package sqlitestore keeps the facts of a [memory.Fact] memory in an
// SQLite database file (pure Go, no cgo), safe for several processes that
// share the file: every change is one IMMEDIATE transaction, the database
// runs in WAL mode so readers never block the writer, and a writer waits
// (busy_timeout) for another process's write instead of failing.
//
//	st, err := sqlitestore.Open("facts.db", sqlitestore.Options{})
//	if err != nil {
//		return err
//	}
//	defer st.Close()
//	f, err := memory.NewFact(ctx, memory.FactOptions{Store: st, Identity: "alice", Provider: p})
//
// # Layout
//
// The file stays readable with the sqlite3 shell: table facts holds one row
// per record (times as RFC 3339 text in UTC, invalid_at NULL while the
// fact is current), table meta the identity, the next id and a generation
// counter, table vectors the embedding vectors (little-endian float32) of
// one embedding model.
//
// # Several processes
//
// [Store.Update] reads the latest state inside its transaction, so two
// processes adding facts at once never lose one and never reuse an id. A
// Fact memory caches what it read; [Store.Generation] changes with every
// committed update, so a process can tell when another one wrote and call
// Fact.Reload.
package sqlitestore
