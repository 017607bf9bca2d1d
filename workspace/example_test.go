package workspace_test

import (
	"context"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/workspace"
)

func Example() {
	dir, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(dir)
	w, err := workspace.Open(dir, workspace.Options{WriteExt: []string{".md"}})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	ctx := workspace.WithReason(context.Background(), "first draft")

	c, _ := w.Write(ctx, "report.md", []byte("# Report\nall good\n"))
	w.Write(ctx, "report.md", []byte("# Report\nall fine\n"))
	for _, p := range []string{"../demo.py", "virus.exe", "C:/Windows/x.md"} {
		_, err := w.Write(ctx, p, []byte("x"))
		fmt.Println(err)
	}
	d, _ := w.Diff(c.ID + 1)
	fmt.Print(d)
	rb, _ := w.RollbackLast(ctx)
	b, _ := w.Read("report.md")
	fmt.Printf("change %d undid %v: %q\n", rb.ID, rb.Undoes, b)
	// Output:
	// write ../demo.py: path escapes the workspace
	// write virus.exe: extension .exe is not allowed here: allowed .md
	// write C:/Windows/x.md: absolute paths are not allowed: write a path relative to the workspace
	// --- a/report.md
	// +++ b/report.md
	// @@ -1,2 +1,2 @@
	//  # Report
	// -all good
	// +all fine
	// change 3 undid [2]: "# Report\nall good\n"
}
