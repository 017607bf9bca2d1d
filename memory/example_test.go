package memory_test

import (
	"context"
	"fmt"
	"log"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

func ExampleBuffer() {
	buf, err := memory.NewBuffer(memory.BufferOptions{MaxMessages: 3})
	if err != nil {
		log.Fatal(err)
	}
	msgs := []llm.Message{
		llm.SystemText("You are terse."),
		llm.UserText("Hi, I'm Ada."), llm.AssistantText("Hello Ada."),
		llm.UserText("What is 2+2?"), llm.AssistantText("4."),
		llm.UserText("And 3+3?"),
	}
	out, _, _ := buf.Compact(context.Background(), msgs)
	for _, m := range out {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// system: You are terse.
	// user: What is 2+2?
	// assistant: 4.
	// user: And 3+3?
}

func ExampleSummarizing() {
	ctx := context.Background()
	// A scripted model stands in for a cheap real one.
	model := scripted.New(scripted.Turn{
		Text:  "Ada asked for two sums (2+2=4, 3+3=6).",
		Usage: &llm.Usage{InputTokens: 120, OutputTokens: 14},
	})
	mem, err := memory.NewSummarizing(memory.SummarizingOptions{Provider: model, MaxMessages: 4, KeepRecent: 2})
	if err != nil {
		log.Fatal(err)
	}
	msgs := []llm.Message{
		llm.SystemText("You are terse."),
		llm.UserText("What is 2+2?"), llm.AssistantText("4."),
		llm.UserText("And 3+3?"), llm.AssistantText("6."),
		llm.UserText("And 4+4?"),
	}
	out, usage, err := mem.Compact(ctx, msgs)
	if err != nil {
		log.Fatal(err) // wraps memory.ErrSummaryFailed: run with msgs instead
	}
	for _, m := range out {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	fmt.Println("tokens spent:", usage.TotalTokens)
	// Output:
	// system: You are terse.
	// system: [Summary of the earlier conversation]
	// Ada asked for two sums (2+2=4, 3+3=6).
	// user: And 4+4?
	// tokens spent: 134
}

func ExampleFact() {
	ctx := context.Background()
	// The model's extraction answers, scripted: the first conversation
	// adds a fact, the second contradicts it.
	model := scripted.New(
		scripted.Turn{Text: `{"operations":[{"op":"add","fact":"Prefers calls in the evening.","subject":"Ada"}]}`},
		scripted.Turn{Text: `{"operations":[{"op":"update","id":1,"fact":"Prefers calls in the morning."}]}`},
	)
	mem, err := memory.NewFact(ctx, memory.FactOptions{
		Provider:    model,
		Identity:    "ada",
		MaxMessages: 2, KeepRecent: 1,
		// Path: "facts/ada.json" keeps the facts in a JSON file.
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, said := range []string{"Call me in the evening.", "Actually, mornings are better."} {
		conversation := []llm.Message{
			llm.UserText(said), llm.AssistantText("Noted."),
			llm.UserText("Thanks, bye."),
		}
		if _, _, err := mem.Compact(ctx, conversation); err != nil {
			log.Fatal(err)
		}
	}

	// A new conversation starts with the current facts.
	out, _, _ := mem.Compact(ctx, []llm.Message{llm.UserText("When should we call?")})
	fmt.Println(out[0].Text())

	// The contradicted fact was closed, not overwritten.
	for _, r := range mem.History(2) {
		fmt.Printf("#%d %q current=%v superseded_by=%d\n", r.ID, r.Text, r.Current(), r.SupersededBy)
	}
	// Output:
	// [Remembered facts]
	// - Prefers calls in the morning. (Ada)
	// #1 "Prefers calls in the evening." current=false superseded_by=2
	// #2 "Prefers calls in the morning." current=true superseded_by=0
}

func ExampleFact_Recall() {
	ctx := context.Background()
	mem, err := memory.NewFact(ctx, memory.FactOptions{}) // no model: store and recall only
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range []string{"Rent is 743 euros a month.", "Commutes by metro.", "Has a daughter, Lea."} {
		if _, err := mem.Remember(ctx, f, "user", memory.SourceUser); err != nil {
			log.Fatal(err)
		}
	}
	found, _ := mem.Recall(ctx, "how much is the rent", 2)
	for _, m := range found {
		fmt.Println(m.Text())
	}
	// Output:
	// [Fact #1] Rent is 743 euros a month. (user)
}

func ExampleFact_ForgetMatching() {
	ctx := context.Background()
	model := scripted.New(scripted.Turn{Text: `{"forget":[1],"reason":"the user's phone number"}`})
	mem, _ := memory.NewFact(ctx, memory.FactOptions{Provider: model})
	_, _ = mem.Remember(ctx, "Phone number is 06 12 34 56 78.", "user", memory.SourceUser)
	_, _ = mem.Remember(ctx, "Likes jazz.", "user", memory.SourceUser)

	gone, err := mem.ForgetMatching(ctx, "forget my phone number", false)
	if err != nil {
		log.Fatal(err) // wraps memory.ErrForgetRefused when unsure: nothing erased
	}
	for _, r := range gone {
		fmt.Println("erased:", r.Text)
	}
	fmt.Println("left:", len(mem.Facts(true)))
	// Output:
	// erased: Phone number is 06 12 34 56 78.
	// left: 1
}
