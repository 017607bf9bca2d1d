package mcp

import (
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned by a [Client] (and wrapped by the errors of its
// tools) once [Client.Close] was called.
var ErrClosed = errors.New("mcp: client is closed")

// ErrToolRefused is wrapped by the error [Server.SetTools] returns for a
// tool it cannot serve (an input schema that is not a JSON object schema, a
// name taken twice).
var ErrToolRefused = errors.New("mcp: tool not served")

// ServerError is an infrastructure failure talking to an MCP server: the
// process could not start or died, the connection broke, the server did not
// answer in time, or it answered a request with a JSON-RPC error other than
// "invalid params" (which a tool call reports as an error result the model
// can act on).
type ServerError struct {
	// Server names the server: its implementation name once initialized,
	// else the command or URL it was reached at.
	Server string
	// Method is the MCP method that failed: "initialize", "tools/list" or
	// "tools/call".
	Method string
	// Tool is the server's name of the tool for "tools/call".
	Tool string
	// Code is the JSON-RPC error code when the server answered with an
	// error, 0 otherwise.
	Code int64
	// Stderr holds the last lines a stdio server wrote on its standard
	// error, which usually say why it failed.
	Stderr string
	// Err is the underlying error.
	Err error
}

func (e *ServerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp: server %s: %s", e.Server, e.Method)
	if e.Tool != "" {
		fmt.Fprintf(&b, " %s", e.Tool)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Stderr != "" {
		fmt.Fprintf(&b, " (server stderr: %s)", e.Stderr)
	}
	return b.String()
}

func (e *ServerError) Unwrap() error { return e.Err }
