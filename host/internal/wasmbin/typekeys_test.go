package wasmbin

import (
	"slices"
	"testing"
)

func TestTypeKeys(t *testing.T) {
	// Types () -> (), (i32) -> (i32), () -> () again, behind a custom
	// section.
	b := genSection([]byte("\x00asm\x01\x00\x00\x00"), 0, []byte{1, 'x', 9})
	b = genSection(b, 1, []byte{3, 0x60, 0, 0, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 0, 0})
	keys, err := TypeKeys(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || keys[0] != keys[2] || keys[0] == keys[1] || !slices.Equal([]byte(keys[1]), []byte{0x60, 1, 0x7f, 1, 0x7f}) {
		t.Errorf("keys %q", keys)
	}
	if _, err := TypeKeys(b[:len(b)-2]); err == nil {
		t.Error("a cut type section: no error")
	}
}
