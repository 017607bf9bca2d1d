// Package mcp connects agents to the Model Context Protocol: a [Client]
// mounts the tools of an MCP server as [tool.Tool] values, and a [Server]
// serves tool.Tools (the sandboxed tools of a plugins directory, Go
// functions) to any MCP client.
//
//	// Mount the tools of an MCP server run with npx, as untrusted tools
//	// named fs_*, in the agent's registry.
//	c, err := mcp.Connect(ctx, mcp.ClientOptions{
//		Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"},
//		Prefix:  "fs_",
//	})
//	if err != nil {
//		log.Fatal(err) // the server did not start or failed the handshake
//	}
//	defer c.Close()
//	if err := c.Publish(agent.Tools); err != nil {
//		log.Print(err) // names already taken in the registry
//	}
//
//	// Serve tools to other agents on standard input and output.
//	srv := mcp.NewServer(mcp.ServerOptions{Name: "my-tools"})
//	if err := srv.SetTools(reg.Tools()); err != nil {
//		log.Print(err) // tools MCP cannot carry; the others are served
//	}
//	err = srv.ServeStdio(ctx)
//
// Both sides are built on the official Go SDK,
// github.com/modelcontextprotocol/go-sdk; none of its types appear in this
// package's API.
//
// # Mounting a server's tools
//
// [Connect] reaches the server one of three ways: a subprocess speaking on
// its standard input and output ([ClientOptions.Command]), the streamable
// HTTP transport ([ClientOptions.URL]), or an established stream
// ([ClientOptions.Stream]). It performs the handshake (asking for protocol
// version 2025-11-25, which the server may negotiate down) and lists the
// tools. Each tool keeps the server's description, input schema and output
// schema; its name gets [ClientOptions.Prefix] and is made acceptable to
// every model provider. Arguments are validated against the server's
// schema before they are sent, so the model reads which field is wrong.
//
// The set follows the server: on notifications/tools/list_changed the
// client lists the tools again, and registries given to [Client.Publish]
// gain, lose and replace tools to match ([ClientOptions.OnChange] hears
// about it).
//
// # Content and tasks
//
// Results keep MCP's content types: text, images and audio with their
// bytes, resource links (URI, name, title, size) and embedded resources
// (text or bytes), each with its annotations ([tool.Content]). A tool
// whose execution.taskSupport is "required" (MCP tasks, 2025-11-25) is
// called as a task: the call creates it, polls it at the interval the
// server suggests, reads its result, and cancels it when the caller's
// context ends first. The SDK does not speak tasks, so the client sends
// those requests itself in the session, on every transport (on stdio and
// streams, on the session's connection; over HTTP, as POSTs in the
// session).
//
// # Trust and taint
//
// A server is another program, often someone else's, and its results can
// carry instructions planted by whoever wrote the data it read. Every
// mounted tool is therefore flagged [tool.Flags.Untrusted] unless
// [ClientOptions.Trusted] is set: the loop frames its results as data and
// marks the run tainted, so egress tools are guarded from then on. The
// server's annotations (readOnlyHint, idempotentHint, openWorldHint) are
// its own claims and are believed only for a trusted server, and never
// over the host's word: a tool marked [ClientOptions.Egress] has effects,
// so it is not idempotent whatever the server says. Mark the tools of a
// server that can send data out with [ClientOptions.Egress].
// Every mounted tool carries the permission label "mcp" for policies.
//
// # The subprocess
//
// A server subprocess does not inherit the host's environment, which
// usually holds API keys: it gets HOME, LOGNAME, PATH, SHELL, TERM and USER
// (the variables the official TypeScript SDK passes too) plus
// [ClientOptions.Env]; [ClientOptions.InheritEnv] passes everything. It
// runs in a process group of its own. [Client.Close] closes its input,
// waits, then terminates and finally kills the group, so nothing it
// started (npx starts node) stays behind. The last lines it wrote on its
// standard error are kept and reported in errors.
//
// # Two tiers of failure
//
// A tool's own failure (isError), arguments that do not satisfy its schema
// and a call the server refuses as invalid params (an unknown tool) are
// error results: the model reads them and goes on. A server that died, a
// broken connection, a request not answered within
// [ClientOptions.Timeout] and other JSON-RPC errors are Go errors of type
// *[ServerError]: the infrastructure failed.
//
// # Serving tools
//
// A [Server] serves any number of sessions at once over stdio
// ([Server.ServeStdio]), any stream ([Server.ServeIO]) and streamable HTTP
// (a Server is an http.Handler). [Server.SetTools] replaces the tool set
// and notifies every session that the list changed; a hot-reloading
// plugins directory calls it after each reload. Tool flags become MCP
// annotations: untrusted or egress tools reach an open world,
// idempotent tools say so. A tool failure, and also an infrastructure
// error, reaches the client as an isError result. Over HTTP, requests
// naming another host on a loopback address (DNS rebinding) and
// cross-origin browser requests are refused; there is no authentication,
// so serve on loopback or behind an authenticating proxy.
//
// `autoagent mcp serve` is a Server for the approved tools of a plugins
// directory.
package mcp
