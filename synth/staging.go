package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
)

// Staged is an accepted tool written to the staging directory, waiting for
// a person to review and approve it. Its files share a stem, NAME (or
// NAME-2, NAME-3… when a different tool of that name is already staged):
//
//	NAME.wasm       the module; for JavaScript, the engine
//	NAME.tool.json  the describe sidecar (JavaScript: carries the script under "config")
//	NAME.js|NAME.go the source, for review
//	NAME.synth.json the record: digests, language, grants asked for, how it was made
//
// Promotion is the manifest's path: move NAME.wasm and NAME.tool.json into
// the plugins directory and approve NAME.wasm (`autoagent synth promote`
// does the move and prints the approve command). The approval pins the
// module's sha256 and the sidecar's, so the script cannot change after
// review.
type Staged struct {
	Dir  string
	Stem string
	// Module, Sidecar, Source and Record are the paths written; Sidecar is
	// "" for a module that describes itself.
	Module, Sidecar, Source, Record string
	SHA256, SidecarSHA256           string
}

// Provenance is what is written beside a staged tool (NAME.synth.json):
// where it came from.
type Provenance struct {
	Name          string     `json:"name"`
	Description   string     `json:"description"`
	Language      string     `json:"language"`
	SHA256        string     `json:"sha256"`
	SidecarSHA256 string     `json:"sidecar_sha256,omitempty"`
	SourceSHA256  string     `json:"source_sha256"`
	Capabilities  []string   `json:"capabilities,omitempty"`
	Goal          string     `json:"goal,omitempty"`
	Examples      int        `json:"examples,omitempty"`
	Shown         int        `json:"shown,omitempty"`
	HeldOut       int        `json:"held_out,omitempty"`
	Attempts      int        `json:"attempts,omitempty"`
	Usage         *llm.Usage `json:"usage,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
}

// sourceExt is the source file's extension per language.
var sourceExt = map[string]string{"js": ".js", "go": ".go"}

// Stage writes t to the staging directory with rec as its record (nil
// records only what the tool itself says). Files are written atomically;
// a staged tool of the same name and module is replaced, one with a
// different module is kept and the new one gets the next free stem.
func (b *Builder) Stage(ctx context.Context, t *Tool, rec *Provenance) (*Staged, error) {
	start := time.Now()
	st, err := b.stage(t, rec)
	ev := Event{Stage: StageStaging, Tool: t.Name(), Language: t.Language(), Status: StatusOK, Duration: time.Since(start), SHA256: t.SHA256()}
	if err != nil {
		ev.Status, ev.Error = StatusError, err.Error()
	} else {
		ev.Detail = st.Module
	}
	b.emit(ev)
	return st, err
}

func (b *Builder) stage(t *Tool, rec *Provenance) (*Staged, error) {
	dir := b.opts.StagingDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("synth: staging directory: %w", err)
	}
	sha := t.SHA256()
	sideSHA := ""
	if t.pkg.Sidecar != nil {
		sideSHA = manifest.Sum(t.pkg.Sidecar)
	}
	stem, err := freeStem(dir, t.Name(), sha, sideSHA)
	if err != nil {
		return nil, err
	}
	st := &Staged{Dir: dir, Stem: stem, SHA256: sha, Module: filepath.Join(dir, stem+".wasm")}
	ext := sourceExt[t.Language()]
	if ext == "" {
		ext = ".txt"
	}
	st.Source = filepath.Join(dir, stem+ext)
	st.Record = filepath.Join(dir, stem+".synth.json")
	r := Provenance{}
	if rec != nil {
		r = *rec
	}
	r.Name, r.Description, r.Language = t.Name(), t.draft.Description, t.Language()
	r.SHA256, r.SourceSHA256 = sha, manifest.Sum([]byte(t.Source()))
	r.Capabilities = t.draft.Capabilities
	r.CreatedAt = time.Now().UTC().Truncate(time.Second)
	// The module goes last: a staged module is never seen without its
	// sidecar, source and record.
	if side := t.pkg.Sidecar; side != nil {
		st.Sidecar = filepath.Join(dir, stem+".tool.json")
		st.SidecarSHA256 = manifest.Sum(side)
		r.SidecarSHA256 = st.SidecarSHA256
		if err := writeAtomic(st.Sidecar, side); err != nil {
			return nil, err
		}
	}
	if err := writeAtomic(st.Source, []byte(t.Source())); err != nil {
		return nil, err
	}
	recJSON, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(st.Record, append(recJSON, '\n')); err != nil {
		return nil, err
	}
	if err := writeAtomic(st.Module, t.pkg.Module); err != nil {
		return nil, err
	}
	return st, nil
}

// freeStem returns name when nothing is staged under it or the same tool
// (module and sidecar) is, else the first name-N that is free or holds the
// same tool. Every JavaScript tool has the same module, so the sidecar,
// which holds the script, tells them apart; it is compared first, so the
// staged engine (~19 MB) is read and hashed only for the same script.
func freeStem(dir, name, sha, sideSHA string) (string, error) {
	for i := 1; i < 1000; i++ {
		stem := name
		if i > 1 {
			stem = name + "-" + strconv.Itoa(i)
		}
		module := filepath.Join(dir, stem+".wasm")
		_, err := os.Stat(module)
		if errors.Is(err, fs.ErrNotExist) {
			if _, err := os.Stat(filepath.Join(dir, stem+".synth.json")); errors.Is(err, fs.ErrNotExist) {
				return stem, nil
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("synth: staging: %w", err)
		}
		if sidecarSum(filepath.Join(dir, stem+".tool.json")) != sideSHA {
			continue
		}
		b, err := os.ReadFile(module)
		if err != nil {
			return "", fmt.Errorf("synth: staging: %w", err)
		}
		if manifest.Sum(b) == sha {
			return stem, nil
		}
	}
	return "", fmt.Errorf("synth: staging: too many staged tools named %s in %s", name, dir)
}

// writeAtomic writes b to path through a temporary file and a rename, so a
// reader never sees half a file.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("synth: staging: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("synth: staging %s: %w", path, err)
	}
	return nil
}

// sidecarSum is the digest of a staged sidecar, "" when there is none.
func sidecarSum(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return manifest.Sum(b)
}
