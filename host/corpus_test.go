package host

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusUpToDate recomputes the source hashes testdata/wasm/build.sh
// records: a source edited without rebuilding its module fails here. (The
// recipe hash beside it, of the build command, only the script checks.)
func TestCorpusUpToDate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "testdata", "wasm")
	f, err := os.Open(filepath.Join(dir, "SOURCES"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.HasPrefix(fields[2], "recipe:") {
			t.Fatalf("malformed SOURCES line %q", sc.Text())
		}
		h := sha256.New()
		for _, src := range fields[3:] {
			b, err := os.ReadFile(filepath.Join(dir, src))
			if err != nil {
				t.Fatal(err)
			}
			h.Write([]byte(src + "\x00"))
			h.Write(b)
			h.Write([]byte{0})
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != fields[1] {
			t.Errorf("%s is stale: its sources changed; run `make wasm-testdata`", fields[0])
		}
		if _, err := os.Stat(filepath.Join(dir, fields[0])); err != nil {
			t.Errorf("%s: %v", fields[0], err)
		}
		n++
	}
	if n < 15 {
		t.Fatalf("SOURCES lists %d modules", n)
	}
}
