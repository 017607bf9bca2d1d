package autoagent

import "github.com/autoagent-go/autoagent/serve"

// Handler returns the runtime's HTTP API (package serve): runs started,
// streamed, decided and cancelled over HTTP, their traces, evals, signed
// webhooks, the session store and the plugins directory. opts.Agent, Sessions and Plugins default to the
// runtime's. Close the server before the runtime: it stops the runs.
func (rt *Runtime) Handler(opts serve.Options) (*serve.Server, error) {
	if opts.Agent == nil {
		opts.Agent = rt.agent
	}
	if opts.Sessions == nil && rt.sessions != nil {
		opts.Sessions = rt.sessions
	}
	if opts.Plugins == nil {
		opts.Plugins = rt.plugins
	}
	return serve.New(opts)
}
