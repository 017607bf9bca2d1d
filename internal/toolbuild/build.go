package toolbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Options configure [Build]. The zero value builds into NAME.wasm in the
// current directory with the toolchains found on the machine.
type Options struct {
	// Output is the .wasm file to write. Empty means NAME.wasm in the
	// current directory, NAME being the source directory's or file's name.
	Output string
	// PDKDir is the pdk/ directory of an autoagent checkout, where the C
	// header and the Zig and AssemblyScript bindings and compilers are
	// found when the tool's directory lacks them. Empty means
	// $AUTOAGENT_PDK, else the first pdk/ found walking up from the source.
	PDKDir string
	// Progress receives one line when the build starts and a line every
	// few seconds while it runs. Nil means silence.
	Progress io.Writer
	// Toolchain overrides the compiler of a language (a path); empty
	// entries are looked up as described in the package doc.
	Toolchain map[Language]string
	// TempDir is where the temporary module of a Go source without a
	// go.mod is made; "" means os.TempDir(). It is removed when the build
	// ends.
	TempDir string
	// Offline builds Go with nothing from outside: the go command
	// downloads no module (GOPROXY=off) and no toolchain
	// (GOTOOLCHAIN=local), and the environment's GOFLAGS is replaced, so
	// flags set for the user's own builds (-tags, -overlay, -toolexec) do
	// not reach it. For code nobody reviewed, such as the tools a model
	// writes.
	Offline bool
}

// Result describes a finished build.
type Result struct {
	Language Language
	// Output is the path of the module written.
	Output string
	// Size is its size in bytes.
	Size int64
	// Command is the toolchain command that ran.
	Command []string
	// Duration is how long the build took.
	Duration time.Duration
}

// stackSize is the shadow stack of Rust and Zig modules. Their default,
// 1 MiB, makes every fresh instance start with 17 pages of memory that the
// host must allocate and clear; a tool needs far less, and clang already
// uses 64 KiB.
const stackSize = "65536"

// progressEvery is how often a running build reports that it is alive.
const progressEvery = 5 * time.Second

// Build builds the tool at source, a directory or a file, into a module.
func Build(ctx context.Context, source string, opts Options) (*Result, error) {
	lang, err := Detect(source)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return nil, fmt.Errorf("toolbuild: %w", err)
	}
	out := opts.Output
	if out == "" {
		name := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
		out = name + ".wasm"
	}
	return build(ctx, &builder{lang: lang, source: abs, label: abs, pdk: findPDK(opts.PDKDir, abs), opts: opts}, out)
}

// BuildGoFiles builds a Go tool whose sources are in memory: files maps
// plain file names (main.go, not dir/main.go, and no _test.go) to their
// text. They are built as [Build] builds a Go source without a go.mod, in
// a temporary module that requires the Go PDK, which is opts.PDKDir's or
// $AUTOAGENT_PDK's pdk/go, else the copy embedded in the package (there is
// no source directory to find a checkout from). Compiler messages name
// the files by these names. opts.Output is required.
func BuildGoFiles(ctx context.Context, files map[string][]byte, opts Options) (*Result, error) {
	if opts.Output == "" {
		return nil, errors.New("toolbuild: BuildGoFiles needs Options.Output")
	}
	if len(files) == 0 {
		return nil, errors.New("toolbuild: BuildGoFiles was given no file")
	}
	for name := range files {
		if name != filepath.Base(name) || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil, fmt.Errorf("toolbuild: %q is not a Go source file name (a plain name ending in .go, not _test.go)", name)
		}
	}
	label := fmt.Sprintf("%d Go files", len(files))
	if len(files) == 1 {
		label = "1 Go file"
	}
	return build(ctx, &builder{lang: Go, files: files, label: label, pdk: findPDK(opts.PDKDir, ""), opts: opts}, opts.Output)
}

// build runs b's toolchain into a temporary file beside out, renamed to
// out when it succeeded.
func build(ctx context.Context, b *builder, out string) (*Result, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("toolbuild: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".toolbuild-*")
	if err != nil {
		return nil, fmt.Errorf("toolbuild: output directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	b.tmp, b.tmpOut = tmp, filepath.Join(tmp, "module.wasm")
	defer b.removeScratch()
	var plan *command
	switch b.lang {
	case Go:
		plan, err = b.goCommand()
	case C:
		plan, err = b.cCommand()
	case Rust:
		plan, err = b.rustCommand(ctx)
	case AssemblyScript:
		plan, err = b.asCommand()
	case Zig:
		plan, err = b.zigCommand()
	}
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := b.run(ctx, plan); err != nil {
		return nil, err
	}
	fi, err := os.Stat(b.tmpOut)
	if err != nil {
		return nil, &BuildError{Language: b.lang, Command: plan.args, Err: errors.New("the toolchain wrote no module")}
	}
	if err := os.Rename(b.tmpOut, out); err != nil {
		return nil, fmt.Errorf("toolbuild: writing %s: %w", out, err)
	}
	return &Result{Language: b.lang, Output: out, Size: fi.Size(), Command: plan.args, Duration: time.Since(start)}, nil
}

// command is one toolchain invocation.
type command struct {
	args []string
	dir  string
	env  []string
	// note is shown under the progress line that starts the build.
	note string
	// paths, when set, rewrites the toolchain's output so that it names
	// the user's files rather than temporary copies.
	paths *strings.Replacer
}

type builder struct {
	lang Language
	// source is the absolute path of the source, a directory or a file;
	// "" when files holds it.
	source string
	// files are the Go sources given in memory (BuildGoFiles).
	files map[string][]byte
	// label names the source in progress lines.
	label  string
	pdk    string
	tmp    string
	tmpOut string
	opts   Options
	// scratch lists the temporary directories outside the output's
	// directory, removed when the build ends.
	scratch []string
}

// scratchDir makes a temporary directory that the build removes.
func (b *builder) scratchDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp(b.opts.TempDir, pattern)
	if err != nil {
		return "", fmt.Errorf("toolbuild: %w", err)
	}
	b.scratch = append(b.scratch, dir)
	return dir, nil
}

func (b *builder) removeScratch() {
	for _, dir := range b.scratch {
		os.RemoveAll(dir)
	}
}

func (b *builder) tool(def ...string) string {
	if p := b.opts.Toolchain[b.lang]; p != "" {
		return lookFirst(p)
	}
	return lookFirst(def...)
}

// srcDir is the directory holding the source.
func (b *builder) srcDir() string {
	if fi, err := os.Stat(b.source); err == nil && fi.IsDir() {
		return b.source
	}
	return filepath.Dir(b.source)
}

// offlineEnv is what Options.Offline adds to the go command's
// environment. GOFLAGS is replaced by a flag that changes nothing a module
// holds and keeps the go command from running a version-control tool over
// the directory.
var offlineEnv = []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false", "GO111MODULE=on"}

func (b *builder) goCommand() (*command, error) {
	goBin := b.tool("go", filepath.Join(os.Getenv("GOROOT"), "bin", "go"))
	if goBin == "" {
		return nil, &MissingToolchainError{Language: Go, Tool: "the go command", Install: installGo}
	}
	c := &command{
		args: []string{goBin, "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s -w", "-o", b.tmpOut, "."},
		env:  []string{"GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0"},
	}
	if b.opts.Offline {
		c.env = append(c.env, offlineEnv...)
	}
	files := b.files
	if files == nil {
		c.dir = b.srcDir()
		if inGoModule(c.dir) {
			return c, nil
		}
		var err error
		if files, err = b.goFiles(); err != nil {
			return nil, err
		}
	}
	// A source without a go.mod (the tutorial's main.go on its own, or
	// sources in memory) is built in a temporary module, so the user's
	// directory gets no go.mod. The module is outside the output's
	// directory, which is often the user's, so that an interrupted build
	// leaves nothing there either.
	root, err := b.scratchDir("autoagent-gotool-*")
	if err != nil {
		return nil, err
	}
	modDir, pdkFrom, err := b.tempGoModule(root, files)
	if err != nil {
		return nil, err
	}
	if b.files == nil {
		c.note = fmt.Sprintf("  %s has no go.mod: building it in a temporary module with the Go PDK %s", c.dir, pdkFrom)
	} else {
		c.note = "  building them in a temporary module with the Go PDK " + pdkFrom
	}
	c.paths = sourcePaths(c.dir, modDir)
	c.dir = modDir
	// -mod=mod lets the go command add a module the source imports besides
	// the PDK (from the module proxy, unless Offline); GOWORK=off keeps a
	// go.work above the temporary directory out of it.
	c.args = append([]string{goBin, "build", "-mod=mod"}, c.args[2:]...)
	c.env = append(c.env, "GOWORK=off")
	return c, nil
}

// sources lists the files of one language: the file given, or every file
// of the directory with the extension, minus the PDK's own binding.
func (b *builder) sources(ext, binding string) ([]string, error) {
	if fi, err := os.Stat(b.source); err == nil && !fi.IsDir() {
		return []string{b.source}, nil
	}
	files, _ := filepath.Glob(filepath.Join(b.source, "*"+ext))
	var out []string
	for _, f := range files {
		if filepath.Base(f) != binding {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w of %s: no %s file", ErrUnknownLanguage, b.source, ext)
	}
	return out, nil
}

func (b *builder) cCommand() (*command, error) {
	clang := b.tool("clang")
	if clang == "" {
		return nil, &MissingToolchainError{Language: C, Tool: "clang", Install: installC}
	}
	if lookFirst("wasm-ld") == "" {
		return nil, &MissingToolchainError{Language: C, Tool: "the WebAssembly linker wasm-ld (lld)", Install: installC}
	}
	files, err := b.sources(".c", "")
	if err != nil {
		return nil, err
	}
	args := []string{clang, "--target=wasm32-wasi", "-Oz", "-mexec-model=reactor", "-Wl,--strip-all", "-o", b.tmpOut}
	if !exists(filepath.Join(b.srcDir(), "autoagent.h")) && b.pdk != "" {
		args = append(args, "-I", filepath.Join(b.pdk, "c"))
	}
	return &command{args: append(args, files...), dir: b.srcDir()}, nil
}

// rustMain picks the crate root of a directory: lib.rs, or the only .rs
// file other than the binding.
func (b *builder) rustMain() (string, error) {
	files, err := b.sources(".rs", "autoagent.rs")
	if err != nil {
		return "", err
	}
	if len(files) == 1 {
		return files[0], nil
	}
	for _, f := range files {
		if filepath.Base(f) == "lib.rs" {
			return f, nil
		}
	}
	return "", fmt.Errorf("toolbuild: %s holds several .rs files and no lib.rs: name the crate root", b.source)
}

func (b *builder) rustCommand(ctx context.Context) (*command, error) {
	rustc, target := rustTarget(ctx, b.opts.Toolchain[Rust])
	if rustc == "" {
		return nil, &MissingToolchainError{Language: Rust, Tool: "a rustc with the wasm32-wasi standard library", Install: installRust}
	}
	main, err := b.rustMain()
	if err != nil {
		return nil, err
	}
	return &command{
		args: []string{rustc, "--edition", "2021", "--target", target, "--crate-type", "cdylib",
			"-C", "opt-level=s", "-C", "strip=symbols", "-C", "link-arg=-zstack-size=" + stackSize, "-o", b.tmpOut, main},
		dir: b.srcDir(),
	}, nil
}

func (b *builder) asCommand() (*command, error) {
	dir := b.srcDir()
	if filepath.Base(dir) == "assembly" {
		dir = filepath.Dir(dir)
	}
	if lookFirst("node") == "" {
		return nil, &MissingToolchainError{Language: AssemblyScript, Tool: "Node.js", Install: installNode}
	}
	var asc, config string
	for _, root := range []string{dir, filepath.Join(b.pdk, "assemblyscript")} {
		if p := lookFirst(filepath.Join(root, "node_modules", ".bin", "asc")); p != "" && asc == "" {
			asc = p
		}
		if c := filepath.Join(root, "asconfig.json"); config == "" && exists(c) {
			config = c
		}
	}
	if o := b.opts.Toolchain[AssemblyScript]; o != "" {
		asc = lookFirst(o)
	}
	if asc == "" {
		asc = lookFirst("asc")
	}
	if asc == "" {
		return nil, &MissingToolchainError{Language: AssemblyScript, Tool: "the AssemblyScript compiler asc", Install: installAS}
	}
	entry := b.source
	if fi, err := os.Stat(b.source); err == nil && fi.IsDir() {
		entry = filepath.Join(dir, "assembly", "index.ts")
		if !exists(entry) {
			return nil, fmt.Errorf("toolbuild: %s has no assembly/index.ts (the module's entry file)", dir)
		}
	}
	if config == "" {
		return nil, fmt.Errorf("toolbuild: %s has no asconfig.json: copy pdk/assemblyscript/asconfig.json (it selects the WASI shim and exports _initialize)", dir)
	}
	// asc resolves the "lib" folders of extended configs wrongly when the
	// config is named by an absolute path, so name it relative to dir.
	if rel, err := filepath.Rel(dir, config); err == nil {
		config = rel
	}
	return &command{args: []string{asc, entry, "--config", config, "-o", b.tmpOut}, dir: dir}, nil
}

var zigImportRE = regexp.MustCompile(`@import\("autoagent"\)`)

func (b *builder) zigCommand() (*command, error) {
	dir := b.srcDir()
	zig := b.tool("zig", filepath.Join(dir, zigNPMBinary), filepath.Join(b.pdk, "zig", zigNPMBinary))
	if zig == "" {
		return nil, &MissingToolchainError{Language: Zig, Tool: "the Zig compiler (0.11)", Install: installZig}
	}
	files, err := b.sources(".zig", "autoagent.zig")
	if err != nil {
		return nil, err
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("toolbuild: %s holds several .zig files: name the root file", b.source)
	}
	args := []string{zig, "build-lib"}
	src, err := os.ReadFile(files[0])
	if err != nil {
		return nil, fmt.Errorf("toolbuild: %w", err)
	}
	if zigImportRE.Match(src) {
		binding := filepath.Join(dir, "autoagent.zig")
		if !exists(binding) && b.pdk != "" {
			binding = filepath.Join(b.pdk, "zig", "autoagent.zig")
		}
		if !exists(binding) {
			return nil, fmt.Errorf("toolbuild: %s imports \"autoagent\" but no autoagent.zig is next to it (copy pdk/zig/autoagent.zig, or set AUTOAGENT_PDK)", files[0])
		}
		args = append(args, "--mod", "autoagent::"+binding, "--deps", "autoagent")
	}
	cache := filepath.Join(b.tmp, "zig-cache")
	global := cache
	if uc, err := os.UserCacheDir(); err == nil {
		global = filepath.Join(uc, "autoagent", "zig")
	}
	args = append(args, files[0], "-target", "wasm32-wasi", "-dynamic", "-rdynamic", "-O", "ReleaseSmall", "--stack", stackSize,
		"--cache-dir", cache, "--global-cache-dir", global, "-femit-bin="+b.tmpOut)
	return &command{args: args, dir: dir}, nil
}

// run executes c, reporting progress, and turns a failure into a
// *BuildError holding what the toolchain printed.
func (b *builder) run(ctx context.Context, c *command) error {
	cmd := exec.CommandContext(ctx, c.args[0], c.args[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	progress := b.opts.Progress
	if progress != nil {
		fmt.Fprintf(progress, "building %s (%s) with %s\n", b.label, b.lang, filepath.Base(c.args[0]))
		if c.note != "" {
			fmt.Fprintln(progress, c.note)
		}
	}
	if err := cmd.Start(); err != nil {
		return &BuildError{Language: b.lang, Command: c.args, Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				out := output.String()
				if c.paths != nil {
					out = c.paths.Replace(out)
				}
				return &BuildError{Language: b.lang, Command: c.args, Output: out, Err: err}
			}
			return nil
		case <-tick.C:
			if progress != nil {
				fmt.Fprintf(progress, "  still building (%s)\n", time.Since(start).Round(time.Second))
			}
		}
	}
}
