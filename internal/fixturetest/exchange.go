package fixturetest

import "net/http"

// Request is an HTTP request as a recording shows it or as a [Server]
// received it.
type Request struct {
	Method string
	// Path is the request URI: path and query, without scheme and host.
	Path   string
	Header http.Header
	Body   string
}

// Answer is an HTTP response for a [Server] to give.
type Answer struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is sent as is, except Content-Length, which the server
	// computes (recordings may hold the length of a compressed body).
	// Content-Type defaults to application/json.
	Header http.Header
	Body   string
	// Stall keeps the connection open after Body, as a server gone silent
	// mid-answer does, until the client goes away or the test ends.
	Stall bool
	// Cut closes the connection right after Body, in the middle of the
	// response, so the client meets an unexpected EOF.
	Cut bool
}

// Exchange is one recorded request and the answer it got.
type Exchange struct {
	Request Request
	Answer  Answer
}

// Answers returns the answers of ex, in order, for [NewServer].
func Answers(ex []Exchange) []Answer {
	out := make([]Answer, len(ex))
	for i, e := range ex {
		out[i] = e.Answer
	}
	return out
}
