package memtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memtool"
	"github.com/autoagent-go/autoagent/tool"
)

func ExampleAll() {
	ctx := context.Background()
	mem, err := memory.NewFact(ctx, memory.FactOptions{})
	if err != nil {
		log.Fatal(err)
	}
	tools, err := memtool.All(mem, memtool.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reg, _ := tool.NewRegistry(tools...)
	for _, s := range reg.Specs() {
		fmt.Println(s.Name)
	}

	// What the model's calls do:
	res, _ := reg.Call(ctx, tool.Call{Name: "remember", Arguments: json.RawMessage(`{"fact":"Door code is 4B27X.","subject":"user"}`)})
	fmt.Println(res.Text())
	res, _ = reg.Call(ctx, tool.Call{Name: "recall", Arguments: json.RawMessage(`{"query":"door code"}`)})
	fmt.Println(res.Text())
	// Output:
	// recall
	// remember
	// forget
	// {"stored":true,"fact":{"id":1,"fact":"Door code is 4B27X.","subject":"user","source":"agent"}}
	// {"matches":[{"role":"user","content":"[Fact #1] Door code is 4B27X. (user)"}]}
}
