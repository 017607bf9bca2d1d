package toolbuild

import (
	"archive/tar"
	"bufio"
	"bytes"
	_ "embed" // the Go PDK archive
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// goPDKModule is the module path tool sources import the Go PDK by.
const goPDKModule = "github.com/autoagent-go/autoagent/pdk/go"

// tempModulePath is the module path of the temporary module a Go source
// without a go.mod is built in. It must not be "tool", which the go
// command reads as the meta-package of a module's tools.
const tempModulePath = "autoagent-tool"

// minGoVersion is the go line of the temporary module when the PDK's
// go.mod has none: the first Go with //go:wasmexport.
const minGoVersion = "1.24"

// embeddedGoPDK is pdk/go (its go.mod and non-test .go files, those of
// its subpackages under their relative paths) as a tar archive, so that an
// installed autoagent builds a single-file Go tool, and synth a tool a
// model wrote, with no checkout around: the PDK is not published, so a
// module proxy cannot provide it. An archive rather than a directory of
// sources: the embed directive refuses a directory holding a go.mod
// (another module), and one generated file is plainly a build artifact,
// like the committed .wasm modules. TestEmbeddedGoPDKIsCurrent fails when
// it differs from pdk/go; `go generate ./internal/toolbuild` rebuilds it.
//
//go:generate go test . -run TestEmbeddedGoPDKIsCurrent -update
//go:embed gopdk.tar
var embeddedGoPDK []byte

// inGoModule reports whether dir or one of its parents holds a go.mod,
// as the go command looks for one.
func inGoModule(dir string) bool {
	for {
		if exists(filepath.Join(dir, "go.mod")) {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// goModFile is what a go.mod says about a module.
type goModFile struct {
	module, goVersion string
}

func parseGoMod(b []byte) goModFile {
	var m goModFile
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "module":
			m.module = strings.Trim(f[1], `"`)
		case "go":
			m.goVersion = f[1]
		}
	}
	return m
}

// localGoPDK returns the pdk/go directory of the checkout the builder
// found and its go.mod, or "" when there is none: a PDK being worked on
// is then built with the tool.
func (b *builder) localGoPDK() (string, goModFile) {
	if b.pdk == "" {
		return "", goModFile{}
	}
	dir, err := filepath.Abs(filepath.Join(b.pdk, "go"))
	if err != nil {
		return "", goModFile{}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", goModFile{}
	}
	if m := parseGoMod(raw); m.module == goPDKModule {
		return dir, m
	}
	return "", goModFile{}
}

// writeEmbeddedGoPDK writes the embedded Go PDK into dir as a module.
func writeEmbeddedGoPDK(dir string) (goModFile, error) {
	return unpackGoPDK(dir, embeddedGoPDK)
}

// unpackGoPDK writes the files of archive into dir. Every entry must be a
// regular file whose name is a clean relative path inside dir.
func unpackGoPDK(dir string, archive []byte) (goModFile, error) {
	var mod goModFile
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return mod, fmt.Errorf("reading the embedded Go PDK: %w", err)
		}
		if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != h.Name || !filepath.IsLocal(filepath.FromSlash(h.Name)) {
			return mod, fmt.Errorf("the embedded Go PDK holds %q, which is not a file inside the module", h.Name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return mod, fmt.Errorf("reading the embedded Go PDK: %w", err)
		}
		if h.Name == "go.mod" {
			mod = parseGoMod(b)
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return mod, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return mod, err
		}
	}
	if mod.module != goPDKModule {
		return mod, fmt.Errorf("the embedded Go PDK has no go.mod for %s", goPDKModule)
	}
	return mod, nil
}

// goFiles reads the source's .go files, but its tests, by name.
func (b *builder) goFiles() (map[string][]byte, error) {
	paths, err := b.sources(".go", "")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("toolbuild: %w", err)
		}
		files[filepath.Base(p)] = src
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w of %s: only _test.go files", ErrUnknownLanguage, b.source)
	}
	return files, nil
}

// tempGoModule lays out, under root, a module in which Go sources that
// have no go.mod of their own build: root/tool holds the files and a
// go.mod requiring the Go PDK, replaced by a local copy (the checkout's
// pdk/go when one was found, else the copy embedded in autoagent, written
// to root/pdk). The user's directory is only read. It returns the
// module's directory and where the PDK came from.
func (b *builder) tempGoModule(root string, files map[string][]byte) (dir, pdkFrom string, err error) {
	dir = filepath.Join(root, "tool")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("toolbuild: temporary module: %w", err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return "", "", fmt.Errorf("toolbuild: temporary module: %w", err)
		}
	}
	pdkDir, mod := b.localGoPDK()
	pdkFrom = "from " + pdkDir
	if pdkDir == "" {
		pdkDir = filepath.Join(root, "pdk")
		pdkFrom = "embedded in autoagent"
		if err := os.Mkdir(pdkDir, 0o755); err != nil {
			return "", "", fmt.Errorf("toolbuild: temporary module: %w", err)
		}
		if mod, err = writeEmbeddedGoPDK(pdkDir); err != nil {
			return "", "", fmt.Errorf("toolbuild: writing the Go PDK: %w (build the tool in an autoagent checkout, or give it a go.mod that requires and replaces %s)", err, goPDKModule)
		}
	}
	if mod.goVersion == "" {
		mod.goVersion = minGoVersion
	}
	goMod := fmt.Sprintf("module %s\n\ngo %s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n",
		tempModulePath, mod.goVersion, goPDKModule, goPDKModule, strconv.Quote(pdkDir))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(goMod), 0o644); err != nil {
		return "", "", fmt.Errorf("toolbuild: temporary module: %w", err)
	}
	return dir, pdkFrom, nil
}

// sourcePaths makes the go command's messages about the copied files
// name the user's files: it runs in the temporary module, so it prints
// ./main.go where the user wrote /their/dir/main.go. With srcDir "" (the
// sources were given in memory) they are named main.go.
func sourcePaths(srcDir, modDir string) *strings.Replacer {
	entries, _ := os.ReadDir(modDir)
	var pairs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			pairs = append(pairs, "./"+e.Name()+":", filepath.Join(srcDir, e.Name())+":")
		}
	}
	return strings.NewReplacer(pairs...)
}
