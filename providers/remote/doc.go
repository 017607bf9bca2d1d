// Package remote runs a model provider in a backend subprocess and uses it
// as an [llm.Provider]: the provider's code, its dependencies and its API
// key live in another process, supervised by hashicorp/go-plugin over gRPC
// with mutual TLS.
//
//	p, err := remote.New(ctx, remote.Options{
//		Name: "http", // runs ./backends/autoagent-provider-http
//		Args: []string{"--provider", "openai", "--model", "gpt-4o-mini"},
//	})
//	if err != nil {
//		return err
//	}
//	defer p.Close() // stops and reaps the subprocess
//	resp, err := p.Complete(ctx, &llm.Request{Messages: msgs})
//
// # Backends
//
// A provider backend is a binary named autoagent-provider-NAME whose main
// function is [Serve]. [New] finds it in the backends directory
// (Options.Dir, else $AUTOAGENT_BACKENDS, else ./backends) or runs
// Options.Path. The backend sees only a minimal environment plus
// Options.Env unless Options.InheritEnv is set, so it can hold an API key
// the host never reads (see cmd/autoagent-provider-http) and does not
// receive the host's secrets by accident.
//
// # Protocol
//
// The handshake carries a fixed magic cookie and the protocol versions
// each side speaks (go-plugin versioned plugins); version 1 is a gRPC
// service, autoagent.provider.v1.Provider, with Info, Complete and a
// server-streaming Stream, whose messages are the llm types in JSON.
// Context cancellation and deadlines cross the process boundary: a
// cancelled call or an abandoned stream cancels the backend's work.
//
// # Failures
//
// The provider's own errors arrive as they were returned: a
// *llm.ProviderError stays one, with status, code, retryability,
// retry-after and request id. A failure of the process or the connection
// is a [*BackendError] naming the backend: [ErrBackendCrashed] when it died
// during the call (the message quotes the end of its stderr),
// [ErrBackendStart] when it could not be started, the context's error when
// the call's context ended first. A crashed backend is restarted for the
// next call after a backoff (100ms doubling to 10s, reset by a success);
// one that stopped answering is found by a health check and replaced. The
// host never dies with a backend, and [Provider.Close] reaps every process.
package remote
