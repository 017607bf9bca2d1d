package sqlitestore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/sqlitestore"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "facts")
	defer os.RemoveAll(dir)

	st, err := sqlitestore.Open(filepath.Join(dir, "facts.db"), sqlitestore.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	f, err := memory.NewFact(ctx, memory.FactOptions{Store: st, Identity: "alice"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := f.Remember(ctx, "Alice's flight leaves on Friday.", "alice", memory.SourceUser); err != nil {
		fmt.Println(err)
		return
	}

	// Another process opening the same file sees the fact.
	st2, _ := sqlitestore.Open(filepath.Join(dir, "facts.db"), sqlitestore.Options{})
	defer st2.Close()
	state, _ := st2.Load(ctx)
	fmt.Println(state.Identity, len(state.Facts), state.Facts[0].Text)
	// Output: alice 1 Alice's flight leaves on Friday.
}
