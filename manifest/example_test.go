package manifest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
)

func Example() {
	dir, _ := os.MkdirTemp("", "plugins")
	defer os.RemoveAll(dir)
	module := []byte("\x00asm\x01\x00\x00\x00") // the bytes of plugins/fetch_url.wasm
	store := &manifest.Store{Path: filepath.Join(dir, "manifest.json")}

	grant, err := manifest.ParseGrant("net:api.example.com")
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.Approve(context.Background(), manifest.Approval{
		SHA256:    manifest.Sum(module),
		File:      "fetch_url.wasm",
		Grants:    []manifest.Grant{grant},
		Requested: []manifest.Grant{grant},
		Limits:    manifest.Limits{Timeout: 5 * time.Second},
		By:        "alice",
	})
	if err != nil {
		log.Fatal(err)
	}

	m, err := store.Load()
	if err != nil {
		log.Fatal(err)
	}
	if e, ok := m.Lookup(manifest.Sum(module)); ok {
		fmt.Println(e.Name, e.Grants, e.Limits.Timeout)
	}
	module[len(module)-1] ^= 1 // one changed byte
	_, ok := m.Lookup(manifest.Sum(module))
	fmt.Println("still approved:", ok)
	// Output:
	// fetch_url [net:api.example.com] 5s
	// still approved: false
}

func ExampleParseGrant() {
	g, err := manifest.ParseGrant("net:*.example.com")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.MatchHost("api.example.com", 443), g.MatchHost("example.com", 443))

	_, err = manifest.ParseGrant("fs.read:data")
	fmt.Println(err)
	// Output:
	// true false
	// manifest: invalid grant "fs.read:data": fs.read path must be absolute
}

func ExampleParse() {
	_, err := manifest.Parse([]byte("{\"version\": 1,\n \"tools\": {\"x\": 1}}"))
	fmt.Println(err)
	// Output:
	// manifest: <input>:2:12: tools["x"]: the key must be the module's sha256: 64 lower-case hex digits
}

func ExampleStore_Revoke() {
	dir, _ := os.MkdirTemp("", "plugins")
	defer os.RemoveAll(dir)
	store := &manifest.Store{Path: filepath.Join(dir, "manifest.json")}
	ctx := context.Background()
	for _, v := range []string{"v1", "v2"} { // two approved versions of one module
		if _, err := store.Approve(ctx, manifest.Approval{SHA256: manifest.Sum([]byte(v)), File: "echo.wasm", By: "alice"}); err != nil {
			log.Fatal(err)
		}
	}
	removed, err := store.Revoke(ctx, manifest.Revocation{Target: "echo", By: "bob"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("revoked", len(removed))
	for r, err := range manifest.ReadLog(store.LogPath()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.Action, r.By, r.Name)
	}
	// Output:
	// revoked 2
	// approve alice echo
	// approve alice echo
	// revoke bob echo
	// revoke bob echo
}
