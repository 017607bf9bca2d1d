package synth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
)

// Options configure a [Builder]. Host and Writer are required; every other
// zero value works: JavaScript by default and Go when asked, no grants at
// all for generated tools, the host's limits, five self-tests, accepted
// tools staged in plugins/staging.
type Options struct {
	// Host runs the tools, quarantined. Required.
	Host *host.Host
	// Writer is the model that writes tools: a second model call, which
	// may be a different, cheaper provider than the agent's. Required.
	Writer llm.Provider
	// Model overrides the writer's configured model when not empty.
	Model string
	// MaxTokens caps the writer's answer; 0 means 8192.
	MaxTokens int
	// Language is the default language: "js" (the default) or "go".
	Language string
	// Backends are the languages offered; nil means [JavaScript] and [Go]
	// with their zero values.
	Backends []Backend
	// Ceiling is the most a generated tool may be granted. A tool asking
	// for a capability no grant of the ceiling covers is refused. Nil
	// means none: generated tools get no capabilities at all.
	Ceiling []manifest.Grant
	// Limits bound each call of a generated tool; zero fields take the
	// host's limits.
	Limits host.Limits
	// SelfTests is the most self-tests of the writer's run per tool; 0
	// means 5.
	SelfTests int
	// StagingDir is where accepted tools are written (module, describe
	// sidecar, source, record); "" means plugins/staging.
	StagingDir string
	// NoStaging keeps accepted tools in memory only.
	NoStaging bool
	// Observer, when set, receives an [Event] after every step. It is
	// called from the building goroutine and must be safe for concurrent
	// use.
	Observer func(Event)
	// OnUsage, when set, receives the usage of every writer call that
	// reported one, with the context of the call that caused it. Bridge it
	// to the agent loop's usage reporting so tool writing counts against a
	// run's token budget.
	OnUsage func(ctx context.Context, u llm.Usage)
	// Progress receives progress lines of slow one-time steps (the first
	// compile of the JavaScript engine, the first Go build). Nil means
	// silence.
	Progress io.Writer
}

// DefaultStagingDir is where accepted tools are staged by default.
const DefaultStagingDir = "plugins/staging"

// Builder writes, builds, tests and stages tools with a writer model. It is
// safe for concurrent use; Close it to unload every tool it built.
type Builder struct {
	opts     Options
	backends map[string]Backend
	order    []string

	warmMu sync.Mutex
	probes [2]*host.Loaded // keep the compiled engines in memory

	mu     sync.Mutex
	tools  []*Tool
	closed bool
}

// New returns a Builder configured by opts.
func New(opts Options) (*Builder, error) {
	if opts.Host == nil {
		return nil, errors.New("synth: Options.Host is required")
	}
	if opts.Writer == nil {
		return nil, errors.New("synth: Options.Writer (the model that writes tools) is required")
	}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = 8192
	}
	if opts.SelfTests == 0 {
		opts.SelfTests = 5
	}
	if opts.StagingDir == "" {
		opts.StagingDir = DefaultStagingDir
	}
	if opts.Backends == nil {
		opts.Backends = []Backend{&JavaScript{}, &Go{Progress: opts.Progress}}
	}
	b := &Builder{opts: opts, backends: map[string]Backend{}}
	for _, be := range opts.Backends {
		lang := be.Language()
		if _, dup := b.backends[lang]; dup {
			return nil, fmt.Errorf("synth: two back-ends for language %q", lang)
		}
		b.backends[lang] = be
		b.order = append(b.order, lang)
	}
	if opts.Language == "" {
		b.opts.Language = "js"
		if _, ok := b.backends["js"]; !ok {
			b.opts.Language = b.order[0]
		}
	}
	if _, err := b.backend(b.opts.Language); err != nil {
		return nil, err
	}
	return b, nil
}

// Languages returns the languages offered, in the order of Options.Backends.
func (b *Builder) Languages() []string { return slices.Clone(b.order) }

func (b *Builder) backend(lang string) (Backend, error) {
	if lang == "" {
		lang = b.opts.Language
	}
	be, ok := b.backends[lang]
	if !ok {
		return nil, fmt.Errorf("%w %q: this builder offers %v", ErrUnknownLanguage, lang, b.order)
	}
	return be, nil
}

// warmEngine compiles a JavaScript engine variant once, showing progress,
// so the first tool does not look hung. A failure is not remembered: the
// next Build tries again (ctx may have ended, the engine may since exist).
func (b *Builder) warmEngine(ctx context.Context, js *JavaScript, bridge bool) error {
	b.warmMu.Lock()
	defer b.warmMu.Unlock()
	i := 0
	if bridge {
		i = 1
	}
	if b.probes[i] != nil {
		return nil
	}
	e, err := js.engine(bridge)
	if err != nil {
		return err
	}
	l, err := e.warm(ctx, b.opts.Host, b.opts.Progress)
	if err != nil {
		return err
	}
	b.probes[i] = l
	return nil
}

func (b *Builder) emit(ev Event) {
	if b.opts.Observer != nil {
		b.opts.Observer(ev)
	}
}

func (b *Builder) track(t *Tool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return host.ErrClosed
	}
	b.tools = append(b.tools, t)
	return nil
}

func (b *Builder) untrack(t *Tool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tools = slices.DeleteFunc(b.tools, func(x *Tool) bool { return x == t })
}

// Close unloads every tool the Builder built that is still loaded, and
// the engine. Later calls of those tools fail.
func (b *Builder) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	tools := b.tools
	b.tools = nil
	b.mu.Unlock()
	var errs []error
	for _, t := range tools {
		errs = append(errs, t.unload(ctx))
	}
	b.warmMu.Lock()
	for i, p := range b.probes {
		if p != nil {
			errs = append(errs, p.Close(ctx))
			b.probes[i] = nil
		}
	}
	b.warmMu.Unlock()
	return errors.Join(errs...)
}
