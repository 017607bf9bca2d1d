package plugindir

import (
	"context"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

// A reload that finds nothing changed (what every burst of unrelated file
// events costs a watching host): list the directory, read and hash each
// module and sidecar, parse the manifest, reuse every loaded module.
func BenchmarkDirReloadUnchanged10(b *testing.B) {
	e := newPDEnv(b)
	for i := range 10 {
		file := fmt.Sprintf("m%d.wasm", i)
		e.put(file, waTextModule("x", file), waSidecar(nil, fmt.Sprintf("tool%d", i)))
		e.approve(file, manifest.Limits{})
	}
	d, err := Open(context.Background(), e.h, Options{Dir: e.dir})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close(context.Background())
	if len(d.Tools()) != 10 {
		b.Fatalf("%d tools loaded", len(d.Tools()))
	}
	for b.Loop() {
		if _, err := d.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
