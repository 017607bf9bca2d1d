package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/providers/catalog"
)

// The scripted conversation: a name and a bad e-mail in one message (and a
// guest count for a field not open yet), the address again with a count
// out of range, then a valid count.
func TestGuidedForm(t *testing.T) {
	var out bytes.Buffer
	in := strings.NewReader("I'm Ada Lovelace, ada@analytical, 4 of us\nada@analytical.engine, we are 12\n4 then\n")
	b, err := run(context.Background(), in, &out, catalog.Config{Name: "scripted", ScriptFile: "script.jsonl"})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if b.Name != "Ada Lovelace" || b.Email != "ada@analytical.engine" || b.Guests != 4 {
		t.Errorf("booking %+v", b)
	}
	for _, want := range []string{
		`[recorded name = "Ada Lovelace"]`,
		`[rejected email = "ada@analytical": that is not a complete e-mail address]`,
		`[rejected guests = 4: step "guests" is not open now]`,
		`[recorded email = "ada@analytical.engine"]`,
		`[rejected guests = 12: we take bookings for 1 to 8 guests]`,
		`[recorded guests = 4]`,
		`[form complete]`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the conversation lacks %s:\n%s", want, out.String())
		}
	}
}
