package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNameAndText(t *testing.T) {
	for _, c := range []struct{ in, name, text string }{
		{"plain café ✓", "plain café ✓", "plain café ✓"},
		{"ok\x1b[2Jgone", `ok\x1b[2Jgone`, `ok\x1b[2Jgone`},
		{"a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"status: approved\rstatus: pending", `status: approved\rstatus: pending`, `status: approved\rstatus: pending`},
		{"read\u202e:etirw\u202c", `read\u202e:etirw\u202c`, `read\u202e:etirw\u202c`},
		{"csi\u009b31m", `csi\u009b31m`, `csi\u009b31m`},
		{"family 👨\u200d👩\u200d👧", `family 👨\u200d👩\u200d👧`, "family 👨\u200d👩\u200d👧"},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"osc \x1b]0;title\x07", `osc \x1b]0;title\a`, `osc \x1b]0;title\a`},
	} {
		if got := Name(c.in); got != c.name {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.name)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// The writer escapes what a terminal would obey, whatever the write
// boundaries, and leaves JSON valid and meaning the same.
func TestWriter(t *testing.T) {
	in := "line\r\nesc\x1b[31mred \u009b2J bidi\u202e x\ty é 👍 bad\xfe end\n"
	want := `line` + "\r\n" + `esc\u001b[31mred \u009b2J bidi\u202e x` + "\t" + `y é 👍 bad\xfe end` + "\n"
	for _, size := range []int{1, 2, 3, len(in)} {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(in); i += size {
			n, err := w.Write([]byte(in[i:min(i+size, len(in))]))
			if err != nil || n != min(size, len(in)-i) {
				t.Fatalf("Write: %d %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, out.String(), want)
		}
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("cut \xe2\x80"))
	w.Write([]byte("x\r"))
	w.Flush()
	if got := out.String(); got != `cut \xe2\x80x\u000d` {
		t.Errorf("held bytes flushed: %q", got)
	}

	v := map[string]string{"text": "a\u202eb\u0085c\u2028d ✓"}
	b, _ := json.Marshal(v)
	out.Reset()
	w = NewWriter(&out)
	w.Write(b)
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["text"] != v["text"] || strings.ContainsRune(out.String(), '\u202e') {
		t.Errorf("JSON through the writer: %s (%v)", out.String(), err)
	}
}
