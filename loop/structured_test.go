package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

var personSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`)

// The answer is validated against the schema: a bad one goes back with the
// validator's message, the good one is the Result's Structured, typed with
// StructuredAs; every request asks for the schema.
func TestStructuredOutput(t *testing.T) {
	model := scripted.New(
		scripted.Turn{Text: "Alice, 30"},
		scripted.Turn{Text: `{"name":"Alice","age":"thirty"}`},
		scripted.Turn{Text: "```json\n{\"name\":\"Alice\",\"age\":30}\n```"},
	)
	a := &loop.Agent{Provider: model, Structured: loop.StructuredOutput{Schema: personSchema, Name: "Person"}}
	res, err := a.Run(context.Background(), "Alice is 30")
	if err != nil {
		t.Fatal(err)
	}
	type person struct {
		Name string `json:"name"`
		Age  int    `json:"age"`
	}
	p, err := loop.StructuredAs[person](res)
	if err != nil || p.Name != "Alice" || p.Age != 30 || string(res.Structured) != `{"name":"Alice","age":30}` {
		t.Fatalf("structured %s → %+v, %v", res.Structured, p, err)
	}
	reqs := model.Requests()
	for i, r := range reqs {
		if rf := r.ResponseFormat; rf == nil || rf.Type != "json_schema" || rf.Name != "Person" || string(rf.Schema) != string(personSchema) {
			t.Errorf("request %d asks %+v", i, r.ResponseFormat)
		}
	}
	fixes := 0
	for _, m := range res.Messages {
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Text(), "Your answer must be JSON matching the output schema") {
			fixes++
		}
	}
	if fixes != 2 || res.State.OutputRetries != 2 {
		t.Errorf("%d corrections, %d retries", fixes, res.State.OutputRetries)
	}
	// Past the retries: a typed error with the last answer.
	a = &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "no"}, scripted.Turn{Text: "still no"}), Structured: loop.StructuredOutput{Schema: personSchema, Retries: 1}}
	_, err = a.Run(context.Background(), "x")
	var se *loop.StructuredOutputError
	if !errors.As(err, &se) || !errors.Is(err, loop.ErrStructuredOutput) || se.Last != "still no" || se.Attempts != 2 {
		t.Errorf("past the retries: %v", err)
	}
	// A schema that does not compile is refused before any call.
	a = &loop.Agent{Provider: scripted.New(), Structured: loop.StructuredOutput{Schema: json.RawMessage(`{"type":7}`)}}
	if _, err := a.Run(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "Structured.Schema") {
		t.Errorf("a bad schema: %v", err)
	}
	if _, err := loop.StructuredAs[person](&loop.Result{}); err == nil {
		t.Error("StructuredAs of a result without a value")
	}
}

// Tools first, then the answer in the schema.
func TestStructuredOutputAfterTools(t *testing.T) {
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("a", "echo", `{}`)}},
		scripted.Turn{Text: `{"name":"Bob","age":41}`},
	)
	var ran atomic.Int32
	a := &loop.Agent{Provider: model, Tools: nestedRegistry(t, countingTool(t, "echo", &ran, "e", tool.Flags{})), Structured: loop.StructuredOutput{Schema: personSchema}}
	res, err := a.Run(context.Background(), "x")
	if err != nil || string(res.Structured) != `{"name":"Bob","age":41}` || ran.Load() != 1 {
		t.Errorf("%v %s %d", err, res.Structured, ran.Load())
	}
}

// A schema derived from a Go type (tool.SchemaFor) is what the answer is
// checked against, and StructuredAs gives the value back typed.
func TestStructuredOutputFromAGoType(t *testing.T) {
	type Book struct {
		Title string   `json:"title" jsonschema:"the title"`
		Year  int      `json:"year"`
		Tags  []string `json:"tags,omitempty"`
	}
	schema, err := tool.SchemaFor[Book]()
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{
		Provider:   scripted.New(scripted.Turn{Text: `{"title":"Dune","year":1965,"extra":1}`}, scripted.Turn{Text: `{"title":"Dune","year":1965}`}),
		Structured: loop.StructuredOutput{Schema: schema},
	}
	res, err := a.Run(context.Background(), "a book")
	if err != nil {
		t.Fatal(err)
	}
	b, err := loop.StructuredAs[Book](res)
	if err != nil || b.Title != "Dune" || b.Year != 1965 || res.State.OutputRetries != 1 {
		t.Errorf("%+v %v, %d retries (the extra property must be refused)", b, err, res.State.OutputRetries)
	}
}
