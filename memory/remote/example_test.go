package remote_test

import (
	"context"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/remote"
)

// The backend here is this test binary, which serves a Fact memory when
// started with AUTOAGENT_TEST_MEMORY_BACKEND set; a real program names a
// backend binary with Options.Name or Options.Path.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	m, err := remote.New(ctx, remote.Options{
		Path: os.Args[0],
		Env: []string{"AUTOAGENT_TEST_MEMORY_BACKEND=fact", "AUTOAGENT_TEST_DIR=" + dir,
			"GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()

	if r, ok := m.(memory.Rememberer); ok {
		if _, err := r.Remember(ctx, "Alice prefers tea to coffee.", "alice", memory.SourceUser); err != nil {
			fmt.Println(err)
			return
		}
	}
	got, err := m.Recall(ctx, "what does alice drink", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, msg := range got {
		fmt.Println(msg.Text())
	}
	// Output:
	// [Fact #1] Alice prefers tea to coffee. (alice)
}
