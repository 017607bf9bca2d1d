package plugindir

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// A plugins directory with one approved and one pending module: only the
// approved one's tool reaches the registry, next to the host's own tools.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "plugins")
	defer os.RemoveAll(dir)
	// Two modules dropped in; each describes its tools in a sidecar.
	os.WriteFile(filepath.Join(dir, "hello.wasm"), waTextModule("hello!", "1"), 0o644)
	os.WriteFile(filepath.Join(dir, "hello.tool.json"), waSidecar(nil, "hello"), 0o644)
	os.WriteFile(filepath.Join(dir, "stranger.wasm"), waTextModule("hi", "2"), 0o644)
	os.WriteFile(filepath.Join(dir, "stranger.tool.json"), waSidecar(nil, "stranger"), 0o644)

	// A person approves hello.wasm's exact bytes (autoagent tools approve).
	module, _ := os.ReadFile(filepath.Join(dir, "hello.wasm"))
	side, _ := os.ReadFile(filepath.Join(dir, "hello.tool.json"))
	store := &manifest.Store{Path: filepath.Join(dir, "manifest.json")}
	if _, err := store.Approve(ctx, manifest.Approval{
		SHA256: manifest.Sum(module), SidecarSHA256: manifest.Sum(side), File: "hello.wasm", By: "alice",
	}); err != nil {
		log.Fatal(err)
	}

	h, err := host.New(ctx, host.Options{NoDiskCache: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	plugins, err := Open(ctx, h, Options{Dir: dir})
	if err != nil {
		log.Fatal(err) // the manifest is corrupt, or the directory unreadable
	}
	defer plugins.Close(ctx)
	for _, p := range plugins.Snapshot().Plugins {
		fmt.Println(p.File, p.Status, p.Tools)
	}

	reg, _ := tool.NewRegistry() // the host's own tools go here first
	if err := plugins.Publish(reg); err != nil {
		log.Print(err) // a plugin tool named like a host tool is refused
	}
	res, _ := reg.Call(ctx, tool.Call{Name: "hello", Arguments: []byte(`{}`)})
	fmt.Println(res.Text()) // a long-running host also ranges over plugins.Watch(ctx)
	// Output:
	// hello.wasm approved [hello]
	// stranger.wasm pending []
	// hello!
}
