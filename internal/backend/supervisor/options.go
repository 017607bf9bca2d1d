package supervisor

import (
	"io"
	"time"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
)

// Options says which backend to run and how: the Options of
// providers/remote and memory/remote, which are this type. The zero value
// of every field but Name (or Path) works.
type Options struct {
	// Name is the backend's name: the binary autoagent-provider-NAME (or
	// autoagent-memory-NAME) in Dir. Required unless Path is set.
	Name string
	// Dir is the backends directory searched for Name. Empty means
	// $AUTOAGENT_BACKENDS, or ./backends when that is unset.
	Dir string
	// Path runs this binary instead of searching Dir; Name then only
	// labels the backend in errors (by default it is taken from the file
	// name).
	Path string
	// Args are the backend's command-line arguments (for
	// autoagent-provider-http: --provider, --model, --base-url; for
	// autoagent-memory-sqlite: --db, --identity, ...).
	Args []string
	// Env holds "KEY=VALUE" entries added to the backend's environment.
	Env []string
	// InheritEnv gives the backend the host's whole environment. By default
	// it sees only PATH, HOME, the temporary directory, locale, time zone,
	// TLS roots and proxy settings, plus Env: a backend does not receive the
	// host's secrets by accident.
	InheritEnv bool
	// StartTimeout bounds the start and handshake of the process
	// (default 10s).
	StartTimeout time.Duration
	// MinRestartBackoff and MaxRestartBackoff bound the wait before a
	// process is restarted after a crash or a failed start; it doubles with
	// each consecutive failure and resets after a successful call
	// (defaults 100ms and 10s).
	MinRestartBackoff, MaxRestartBackoff time.Duration
	// HealthTimeout bounds the health check made before reusing a process
	// whose previous call ended with its context (default 2s). A process
	// that fails it is killed and replaced.
	HealthTimeout time.Duration
	// Stderr receives a copy of the backend's standard error (default: not
	// copied). The last few KiB are kept regardless and quoted in the
	// error of a crash.
	Stderr io.Writer
}

// Config resolves the backend opts names among those of kind and returns
// the supervisor's configuration for it, serving plugins and dispensing
// kind's plugin, with dial added to go-plugin's gRPC dial options (tests
// observe the wire through them). name is the backend's name for errors.
func (opts Options) Config(kind backend.Kind, plugins map[int]plugin.PluginSet, dial []grpc.DialOption) (cfg Config, name string, err error) {
	path, name, err := backend.Resolve(kind, opts.Name, opts.Dir, opts.Path)
	if err != nil {
		return Config{}, "", err
	}
	return Config{
		Kind: kind, Name: name, Path: path, Args: opts.Args,
		Env: opts.Env, InheritEnv: opts.InheritEnv,
		Plugins: plugins, Dispense: backend.PluginName(kind),
		StartTimeout: opts.StartTimeout, MinBackoff: opts.MinRestartBackoff, MaxBackoff: opts.MaxRestartBackoff,
		PingTimeout: opts.HealthTimeout, Stderr: opts.Stderr, DialOptions: dial,
	}, name, nil
}
