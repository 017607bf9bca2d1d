package toolbuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Language is a guest language the PDK supports.
type Language string

// The supported languages.
const (
	Go             Language = "go"
	C              Language = "c"
	Rust           Language = "rust"
	AssemblyScript Language = "assemblyscript"
	Zig            Language = "zig"
)

// String returns the language's display name.
func (l Language) String() string {
	switch l {
	case Go:
		return "Go"
	case C:
		return "C"
	case Rust:
		return "Rust"
	case AssemblyScript:
		return "AssemblyScript"
	case Zig:
		return "Zig"
	}
	return string(l)
}

// ErrUnknownLanguage is wrapped by the error [Detect] returns for a source
// it cannot place.
var ErrUnknownLanguage = errors.New("toolbuild: cannot tell the language")

// Detect returns the language of the tool source at path, a directory or
// a file.
func Detect(path string) (Language, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("toolbuild: %w", err)
	}
	if !fi.IsDir() {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".go":
			return Go, nil
		case ".c":
			return C, nil
		case ".rs":
			return Rust, nil
		case ".ts":
			return AssemblyScript, nil
		case ".zig":
			return Zig, nil
		}
		return "", fmt.Errorf("%w of %s: want a .go, .c, .rs, .ts or .zig file, or a directory", ErrUnknownLanguage, path)
	}
	if exists(filepath.Join(path, "go.mod")) {
		return Go, nil
	}
	if ts, _ := filepath.Glob(filepath.Join(path, "assembly", "*.ts")); len(ts) > 0 {
		return AssemblyScript, nil
	}
	for _, c := range []struct {
		glob string
		lang Language
	}{{"*.go", Go}, {"*.c", C}, {"*.rs", Rust}, {"*.zig", Zig}} {
		if m, _ := filepath.Glob(filepath.Join(path, c.glob)); len(m) > 0 {
			return c.lang, nil
		}
	}
	return "", fmt.Errorf("%w of %s: no go.mod, assembly/*.ts, *.c, *.rs or *.zig in it", ErrUnknownLanguage, path)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
