package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckProtected: a write grant of a directory holding a protected one,
// of the protected one, of one inside it, or of a link that leads there, is
// refused; a read grant only where reading is protected; grants beside it
// pass.
func TestCheckProtected(t *testing.T) {
	root := t.TempDir()
	plugins := filepath.Join(root, "proj", "plugins")
	kv := filepath.Join(root, "kv")
	for _, d := range []string{plugins, kv, filepath.Join(root, "proj", "src"), filepath.Join(root, "other")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "proj"), filepath.Join(root, "other", "link")); err != nil {
		t.Fatal(err)
	}
	protected := []Protected{{Dir: plugins, What: "the plugins directory"}, {Dir: kv, What: "the kv stores", Read: true}}
	for spec, refused := range map[string]bool{
		"fs.write:" + filepath.Join(root, "proj"):          true,
		"fs.write:" + root:                                 true,
		"fs.write:" + plugins:                              true,
		"fs.write:" + filepath.Join(plugins, "data"):       true,
		"fs.write:" + filepath.Join(root, "other", "link"): true,
		"fs.write:" + filepath.Join(root, "proj", "src"):   false,
		"fs.write:" + filepath.Join(root, "other"):         false,
		"fs.read:" + filepath.Join(root, "proj"):           false,
		// fs.workspace writes: refused where fs.write is.
		"fs.workspace:" + filepath.Join(root, "proj"):          true,
		"fs.workspace:" + filepath.Join(plugins, "data"):       true,
		"fs.workspace:" + filepath.Join(root, "other", "link"): true,
		"fs.workspace:" + filepath.Join(root, "proj", "src"):   false,
		"fs.read:" + root:                   true,
		"fs.read:" + filepath.Join(kv, "x"): true,
		"net:example.com":                   false,
	} {
		g, err := ParseGrant(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		err = CheckProtected([]Grant{g}, protected)
		var pe *ProtectedError
		if got := errors.As(err, &pe); got != refused {
			t.Errorf("%s: %v, want refused %v", spec, err, refused)
		}
	}
}
