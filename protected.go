package autoagent

import (
	"os"
	"path/filepath"

	"github.com/autoagent-go/autoagent/internal/backenddir"
	"github.com/autoagent-go/autoagent/manifest"
)

// Protects returns what no fs grant of the runtime's sandboxed tools may
// reach, beside the plugins directory, the manifest's, the host's cache
// and the kv stores (which plugindir and host protect themselves): the
// files that govern a run (policy, checkpoint and journal, the files of
// the session store when it names them, trace, recording), the backends
// directory and fact memory, the default trust store's directory, the
// program's own executable, what each of cfg.Features protects, and
// cfg.Protected (an agent file's path, the application's own). A guest granted a workspace that holds one of these files is
// refused the file itself (host.Options.Protected).
func (cfg Config) Protects() []manifest.Protected {
	var out []manifest.Protected
	file := func(path, what string) {
		if path != "" {
			out = append(out, manifest.Protected{File: path, What: what})
		}
	}
	file(cfg.PolicyFile, "the run's policy, which decides what tools may do")
	file(cfg.CheckpointFile, "the run's checkpoint, which a resume continues from")
	if cfg.CheckpointFile != "" {
		file(cfg.CheckpointFile+".journal", "the run's journal of tool calls")
	}
	// A store kept in files names them (session/sqlitestore's: the database
	// and the logs SQLite replays into it).
	if st, ok := cfg.Sessions.(interface{ Files() []string }); ok {
		for _, f := range st.Files() {
			file(f, "the session store, the conversations runs continue")
		}
	}
	file(cfg.TraceFile, "the run's trace")
	file(cfg.RecordFile, "the run's recording, which a replay plays back")
	if cfg.Cache != nil {
		file(cfg.Cache.File, "the response cache, whose answers are replayed as the model's own")
	}
	if exe, err := os.Executable(); err == nil {
		file(exe, "the program running the agent")
	}
	// The backends directory whether or not this run uses a backend: a
	// binary put there runs natively in a later one.
	if dir := backenddir.Dir(cfg.BackendsDir); dir != "" {
		out = append(out, manifest.Protected{Dir: dir, Read: true, What: "the backends directory, whose binaries run natively"})
	}
	// Trusted documents reach the model unframed: no tool may plant
	// one. Untrusted ones are framed whoever wrote them.
	for _, d := range cfg.Retrieval.TrustedDirs {
		out = append(out, manifest.Protected{Dir: d, What: "trusted documents retrieval puts before the model unframed"})
	}
	if cfg.Memory.Kind == "fact" && cfg.Memory.Dir != "" {
		out = append(out, manifest.Protected{Dir: cfg.Memory.Dir, Read: true, What: "the fact memory, what the user said"})
	}
	// The default trust store's directory: a module able to write there
	// could trust any manifest. A feature with a trust store of its own
	// protects that one (sandbox.Sandbox.Protects).
	if p, err := manifest.DefaultTrustPath(); err == nil {
		out = append(out, manifest.Protected{Dir: filepath.Dir(p), What: "the trust store's directory, where a module able to write could trust any manifest"})
	}
	for _, f := range cfg.Features {
		if f != nil {
			out = append(out, f.Protects()...)
		}
	}
	return append(out, cfg.Protected...)
}
