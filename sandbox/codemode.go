package sandbox

import (
	"context"
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/synth"
)

// CodeModeConfig configures code mode (loop.Agent.CodeMode).
type CodeModeConfig struct {
	// Mode is codemode.Off (the zero value), Also or Only.
	Mode codemode.Mode
	// MaxCalls bounds one program's tool calls (0: codemode.DefaultMaxCalls).
	MaxCalls int
	// Limits bound one program's time, memory and output (zero fields:
	// the host's 10 s, 64 MiB, 1 MiB).
	Limits host.Limits
	// Engine is the engine module's path; "" means the one
	// $AUTOAGENT_JS_ENGINE names (jsengine-tools.wasm beside it), else the
	// user cache's (autoagent/synth), never a working directory's
	// checkout: see TrustedEngine.
	Engine string
	// Languages are the languages the model may write programs in:
	// codemode.JavaScript, codemode.Python or both (codemode.ParseLanguages
	// reads them); nil means JavaScript alone. A program naming no
	// language is JavaScript when JavaScript is offered, else Python.
	Languages []string
	// PythonEngine is the Python engine's path (pyengine.wasm, built by
	// `make python-engine`); "" means the one $AUTOAGENT_PY_ENGINE names,
	// else the user cache's (autoagent/python), never a working
	// directory's checkout: see TrustedPythonEngine.
	PythonEngine string
}

// offerCodeMode loads the program engines into the sandbox's host (made
// here when no plugins directory made one) and turns code mode on.
func (s *Sandbox) offerCodeMode(ctx context.Context, st *autoagent.Setup) error {
	cm := s.CodeMode
	if _, err := codemode.ParseMode(string(cm.Mode)); err != nil || cm.Mode == codemode.Off {
		return errConfig("CodeMode.Mode %q: want codemode.Also or Only", cm.Mode)
	}
	if err := s.ensureHost(ctx, st); err != nil {
		return err
	}
	r, closers, err := ProgramRunner(ctx, s.host, cm, st.Notes)
	if err != nil {
		return fmt.Errorf("code mode: %w", err)
	}
	s.programs = closers
	st.Agent.CodeMode = codemode.Config{Mode: cm.Mode, Runner: r, MaxCalls: cm.MaxCalls}
	return nil
}

// ProgramRunner loads into h the engines of the languages cm offers
// (JavaScript when cm.Languages is nil) and returns the runner of code
// mode's programs: the one engine's runner, or a codemode.ByLanguage over
// them. The engines are the trusted ones (TrustedEngine,
// TrustedPythonEngine) unless cm names them; progress tells of a slow
// first compilation. Close the returned closers when done.
func ProgramRunner(ctx context.Context, h *host.Host, cm CodeModeConfig, progress io.Writer) (codemode.Runner, []ProgramCloser, error) {
	langs := cm.Languages
	if len(langs) == 0 {
		langs = []string{codemode.JavaScript}
	}
	runners := codemode.ByLanguage{}
	var closers []ProgramCloser
	fail := func(err error) (codemode.Runner, []ProgramCloser, error) {
		for _, c := range closers {
			_ = c.Close(context.WithoutCancel(ctx))
		}
		return nil, nil, err
	}
	for _, lang := range langs {
		if _, dup := runners[lang]; dup {
			continue
		}
		switch lang {
		case codemode.JavaScript:
			engine := cm.Engine
			if engine == "" {
				var err error
				if engine, err = TrustedEngine(); err != nil {
					return fail(err)
				}
			}
			r, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: engine, Limits: cm.Limits, Progress: progress})
			if err != nil {
				return fail(err)
			}
			runners[lang], closers = r, append(closers, r)
		case codemode.Python:
			engine := cm.PythonEngine
			if engine == "" {
				var err error
				if engine, err = TrustedPythonEngine(); err != nil {
					return fail(err)
				}
			}
			r, err := pyprogram.New(ctx, h, pyprogram.Options{Engine: engine, Limits: cm.Limits, Progress: progress})
			if err != nil {
				return fail(err)
			}
			runners[lang], closers = r, append(closers, r)
		default:
			return fail(errConfig("CodeMode.Languages: %q: want %q or %q", lang, codemode.JavaScript, codemode.Python))
		}
	}
	if len(runners) == 1 {
		for _, r := range runners {
			return r, closers, nil
		}
	}
	return runners, closers, nil
}

// ProgramCloser is an engine ProgramRunner loaded.
type ProgramCloser interface{ Close(context.Context) error }

// TrustedEngine returns the path of the code-mode engine
// (synth.BridgeEngineFile) the sandbox loads: beside the engine
// $AUTOAGENT_JS_ENGINE names, else in the user cache directory
// (autoagent/synth), never in the .cache/synth of a checkout holding the
// working directory (synth.FindEngine's rule: the engine runs with
// host.Module.CallAnyTool, and a checkout is not trusted to bring the code
// that gets it). The error wraps synth.ErrNoEngine and says what to do.
func TrustedEngine() (string, error) {
	return synth.FindEngine(synth.BridgeEngineFile)
}

// TrustedPythonEngine returns the path of code mode's Python engine
// (pyprogram.EngineFile) the sandbox may load: the one
// $AUTOAGENT_PY_ENGINE names, else the one in the user cache directory
// (autoagent/python), never the one in the .cache/python of a checkout
// holding the working directory: it is pyprogram.FindEngine, named as
// TrustedEngine is for the JavaScript engine. The error wraps
// pyprogram.ErrNoEngine and says what to do.
func TrustedPythonEngine() (string, error) { return pyprogram.FindEngine() }
