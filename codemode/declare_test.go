package codemode_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// trace summarize counts programs by the tool's name.
func TestTraceKnowsTheProgramTool(t *testing.T) {
	if codemode.ToolName != trace.ProgramTool {
		t.Fatalf("codemode.ToolName %q, trace.ProgramTool %q", codemode.ToolName, trace.ProgramTool)
	}
}

func spec(name, desc, in, out string) llm.ToolSpec {
	s := llm.ToolSpec{Name: name, Description: desc, InputSchema: json.RawMessage(in)}
	if out != "" {
		s.OutputSchema = json.RawMessage(out)
	}
	return s
}

func TestDeclarations(t *testing.T) {
	got := codemode.Declarations([]llm.ToolSpec{
		spec("get_order", "Fetch an order by id.",
			`{"type":"object","properties":{"id":{"type":"integer","description":"The order's number."},"verbose":{"type":"boolean"}},"required":["id"]}`,
			`{"type":"object","properties":{"id":{"type":"integer"},"refund":{"type":"number"},"items":{"type":"array","items":{"type":"string"}}},"required":["id","refund"]}`),
		spec("my-tool", "Two lines\nof doc with */ inside.", `{"type":"object","properties":{"mode":{"enum":["a","b"]},"n":{"type":["number","null"]},"x":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"number"}}]}}}`, ""),
		spec("refs", "", `{"type":"object","properties":{"p":{"$ref":"#/$defs/P"},"tags":{"type":"object","additionalProperties":{"type":"string"}}},"$defs":{"P":{"type":"object","properties":{"k":{"const":"v"}}}}}`, ""),
	})
	want := `declare const tools: {
  /** Fetch an order by id. */
  get_order(args: {
    /** The order's number. */
    id: number;
    verbose?: boolean;
  }): Promise<{
    id: number;
    refund: number;
    items?: string[];
  }>;
  /**
   * Two lines
   * of doc with *` + "\u200b" + `/ inside.
   */
  "my-tool"(args?: {
    mode?: "a" | "b";
    n?: number | null;
    x?: string | number[];
  }): Promise<any>;
  refs(args?: {
    p?: {
      k?: "v";
    };
    tags?: { [key: string]: string };
  }): Promise<any>;
};
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestDeclarationsAreBounded(t *testing.T) {
	// A self-referencing schema and a very deep one end in any, not in an
	// endless or huge declaration.
	deep := `{"type":"object","properties":{"a":`
	for range 50 {
		deep += `{"type":"object","properties":{"a":`
	}
	deep += `{"type":"string"}` + strings.Repeat("}}", 51)
	wide := `{"type":"object","properties":{`
	for i := range 2000 {
		if i > 0 {
			wide += ","
		}
		wide += `"p` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `":{"type":"string"}`
	}
	wide += `}}`
	got := codemode.Declarations([]llm.ToolSpec{
		spec("loop", "", `{"type":"object","properties":{"self":{"$ref":"#"}}}`, ""),
		spec("deep", "", deep, ""),
		spec("wide", "", wide, ""),
	})
	if len(got) > 20000 {
		t.Fatalf("declarations of %d bytes", len(got))
	}
	if !strings.Contains(got, "self?: {") || strings.Count(got, "any") < 2 {
		t.Fatalf("got %s", got)
	}
}

func TestSpec(t *testing.T) {
	s := codemode.Spec([]llm.ToolSpec{spec("echo", "Echo.", `{"type":"object"}`, "")}, true)
	if s.Name != codemode.ToolName || !strings.Contains(s.Description, "echo(args?: { [key: string]: any }): Promise<any>;") ||
		!strings.Contains(s.Description, "find_tools") || !json.Valid(s.InputSchema) {
		t.Fatalf("spec %+v", s)
	}
	if s := codemode.Spec(nil, false); strings.Contains(s.Description, "find_tools") {
		t.Fatalf("without search: %s", s.Description)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]codemode.Mode{"": codemode.Off, "off": codemode.Off, "ALSO": codemode.Also, " only ": codemode.Only} {
		if m, err := codemode.ParseMode(in); err != nil || m != want {
			t.Errorf("%q: %v %v", in, m, err)
		}
	}
	if _, err := codemode.ParseMode("yes"); err == nil || !strings.Contains(err.Error(), "off, also or only") {
		t.Fatalf("err %v", err)
	}
	if codemode.Off.String() != "off" || codemode.Only.String() != "only" {
		t.Fatal("String")
	}
}
