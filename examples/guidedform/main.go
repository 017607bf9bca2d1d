// Command guidedform is a form the host controls, filled in by talking: the
// program's state machine (a Flow) says which fields are open and checks
// each value; the model only turns what the person types into answers for
// the open fields and phrases the questions. It cannot skip a field,
// reorder them or declare the form done.
//
//	go run ./examples/guidedform -script examples/guidedform/script.jsonl < answers.txt
//
// With -provider NAME (and its key in the environment) a real model
// talks instead of the script.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/mail"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/orchestrator"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// booking is the form: a name and an e-mail, asked together, then a
// number of guests from 1 to 8.
type booking struct {
	Name   string `json:"name"`
	Email  string `json:"email"`
	Guests int    `json:"guests"`
}

func (b *booking) Current() []orchestrator.Step {
	var open []orchestrator.Step
	if b.Name == "" {
		open = append(open, orchestrator.Step{ID: "name", Prompt: "the name for the booking"})
	}
	if b.Email == "" {
		open = append(open, orchestrator.Step{ID: "email", Prompt: "an e-mail address for the confirmation"})
	}
	if len(open) == 0 && b.Guests == 0 {
		open = append(open, orchestrator.Step{ID: "guests", Prompt: "how many guests", Hint: "a whole number from 1 to 8"})
	}
	return open
}

func (b *booking) Record(id string, v json.RawMessage) string {
	switch id {
	case "name":
		var s string
		if json.Unmarshal(v, &s) != nil || strings.TrimSpace(s) == "" {
			return "the name is missing"
		}
		b.Name = strings.TrimSpace(s)
	case "email":
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "an e-mail address is text"
		}
		if a, err := mail.ParseAddress(s); err != nil || !strings.Contains(a.Address[strings.LastIndex(a.Address, "@"):], ".") {
			return "that is not a complete e-mail address"
		}
		b.Email = s
	case "guests":
		var n int
		if json.Unmarshal(v, &n) != nil || n < 1 || n > 8 {
			return "we take bookings for 1 to 8 guests"
		}
		b.Guests = n
	default:
		return "no such field"
	}
	return ""
}

func (b *booking) Done() bool { return b.Name != "" && b.Email != "" && b.Guests != 0 }

func main() {
	provider := flag.String("provider", "scripted", "model provider: "+strings.Join(catalog.Names(), ", "))
	script := flag.String("script", "", "script of the scripted provider")
	flag.Parse()
	b, err := run(context.Background(), os.Stdin, os.Stdout, catalog.Config{Name: *provider, ScriptFile: *script})
	if err != nil {
		fmt.Fprintln(os.Stderr, "guidedform:", err)
		os.Exit(1)
	}
	out, _ := json.Marshal(b)
	fmt.Println("booked:", string(out))
}

// run talks through the form, one line of in per utterance, printing the
// conversation and what the host recorded or rejected.
func run(ctx context.Context, in io.Reader, out io.Writer, pc catalog.Config) (*booking, error) {
	var model llm.Provider
	var err error
	if pc.Name == "scripted" {
		// One script for the whole conversation, in order: the
		// orchestrator makes two calls per utterance (interpret, phrase)
		// over the same history, which a per-conversation script would
		// answer alike.
		if pc.ScriptFile == "" {
			return nil, fmt.Errorf("-provider scripted needs -script FILE")
		}
		model, err = scripted.Load(pc.ScriptFile, scripted.Options{})
	} else {
		model, err = catalog.New(pc)
	}
	if err != nil {
		return nil, err
	}
	b := &booking{}
	o := &orchestrator.Orchestrator{Provider: model, Flow: b}
	show := func(seq func(func(orchestrator.Event, error) bool)) error {
		for ev, err := range seq {
			if err != nil {
				return err
			}
			switch ev.Type {
			case orchestrator.EventText:
				fmt.Fprintln(out, "assistant:", ev.Text)
			case orchestrator.EventRecorded:
				fmt.Fprintf(out, "  [recorded %s = %s]\n", ev.Step, ev.Value)
			case orchestrator.EventRejected:
				fmt.Fprintf(out, "  [rejected %s = %s: %s]\n", ev.Step, ev.Value, ev.Reason)
			case orchestrator.EventDone:
				fmt.Fprintln(out, "  [form complete]")
			}
		}
		return nil
	}
	if err := show(o.Start(ctx)); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(in)
	for !b.Done() && sc.Scan() {
		fmt.Fprintln(out, "person:", sc.Text())
		if err := show(o.Handle(ctx, sc.Text())); err != nil {
			return nil, err
		}
	}
	if !b.Done() {
		return b, fmt.Errorf("the input ended before the form was complete")
	}
	return b, nil
}
