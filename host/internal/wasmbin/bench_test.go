package wasmbin

import (
	"os"
	"testing"
)

// BenchmarkValidate: validating a Go guest (3.3 MB) and, when it was
// built, the JavaScript engine (19 MB).
func BenchmarkValidate(b *testing.B) {
	for _, f := range []string{"../../../testdata/wasm/goecho.wasm", "../../../.cache/synth/jsengine.wasm"} {
		bin, err := os.ReadFile(f)
		if err != nil {
			b.Logf("%s: %v", f, err)
			continue
		}
		b.Run(f[len(f)-len("jsengine.wasm"):], func(b *testing.B) {
			b.SetBytes(int64(len(bin)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Validate(bin, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
