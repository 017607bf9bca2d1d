package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/internal/pyenginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// The example prints its table and meets code mode's targets: at least 5×
// fewer model round trips and 60 % fewer request bytes than plain tool
// calling, the same answer and the same 13 tool calls each way.
func TestCodeModeExample(t *testing.T) {
	engine := enginetest.Path(t, synth.BridgeEngineFile)
	t.Setenv(synth.EngineEnv, filepath.Join(filepath.Dir(engine), synth.EngineFile))
	t.Setenv(pyprogram.EngineEnv, pyenginetest.Path(t))
	var out bytes.Buffer
	if err := demo(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	os.Stdout.Write(out.Bytes())
	rows := regexp.MustCompile(`(?m)^\s*(plain, one call per step|plain, calls batched|code mode \(only\)|code mode, Python \(both offered\))\s+(\d+)\s+(\d+)\s+(\d+)\s`).FindAllStringSubmatch(out.String(), -1)
	if len(rows) != 4 {
		t.Fatalf("the table has %d rows:\n%s", len(rows), out.String())
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	plain, code := rows[0], rows[2]
	if n(plain[2]) != 14 || n(rows[1][2]) != 3 || n(code[2]) != 2 {
		t.Errorf("round trips %s, %s, %s; want 14, 3, 2", plain[2], rows[1][2], code[2])
	}
	if n(plain[4]) != 13 || n(code[4]) != 13 {
		t.Errorf("tool calls %s and %s; want 13", plain[4], code[4])
	}
	if saved := 1 - float64(n(code[3]))/float64(n(plain[3])); saved < 0.6 {
		t.Errorf("request bytes %s against %s: %.0f %% fewer", code[3], plain[3], 100*saved)
	}
	// Python, the tools declared once for both languages.
	if py := rows[3]; n(py[2]) != 2 || n(py[4]) != 13 || 1-float64(n(py[3]))/float64(n(plain[3])) < 0.6 {
		t.Errorf("python: round trips %s, tool calls %s, request bytes %s against %s", py[2], py[4], py[3], plain[3])
	}
}
