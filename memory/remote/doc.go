// Package remote runs a memory in a backend subprocess and uses it as a
// [memory.Memory]: the memory's code, its store and any model key it needs
// live in another process, supervised by hashicorp/go-plugin over gRPC
// with mutual TLS.
//
//	m, err := remote.New(ctx, remote.Options{
//		Name: "sqlite", // runs ./backends/autoagent-memory-sqlite
//		Args: []string{"--db", "/var/lib/agent/facts.db", "--identity", "alice"},
//	})
//	if err != nil {
//		return err
//	}
//	defer m.Close() // stops and reaps the subprocess
//	out, usage, err := m.Compact(ctx, msgs)
//
// # Optional interfaces
//
// The value [New] returns implements exactly those of memory.Rememberer,
// memory.Forgetter and memory.Flusher that the served memory implements
// (the backend reports them at start), so the agent loop offers the
// remember and forget tools only when they work.
//
// # Protocol
//
// The handshake carries a fixed magic cookie and the protocol versions
// each side speaks (go-plugin versioned plugins); version 1 is a gRPC
// service, autoagent.memory.v1.Memory (Info, Compact, Recall, Remember,
// Forget, ForgetMatching, Flush), whose messages are the llm and memory
// types in JSON. Context cancellation crosses the process boundary.
//
// # Failures
//
// The memory's own errors arrive as themselves: errors.Is works with
// memory.ErrSummaryFailed, memory.ErrExtractionFailed,
// memory.ErrForgetRefused and the other sentinels, errors.As with
// *memory.CorruptStoreError and *llm.ProviderError. A failure of the
// process or the connection is a [*BackendError] naming the backend
// ([ErrBackendCrashed], [ErrBackendStart], or the context's error). A
// crashed backend is restarted for the next call after a backoff; what it
// kept only in its process memory is lost with it, what it stored is not.
// The host never dies with a backend, and Close reaps every process.
package remote
