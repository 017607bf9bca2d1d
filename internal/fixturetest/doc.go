// Package fixturetest gives the provider adapters' tests the real traffic
// recorded in shared/fixtures/providers, read in place, and a local server
// that replays it.
//
//	ex := fixturetest.Cassette(t, "fantasy/TestOpenAICommon/openai-gpt-4o/tool.yaml")
//	srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
//	// point the provider at srv.URL, run the conversation, then compare
//	// what it sent with what the recording shows:
//	got := srv.Request(t, 1)
//	compare(ex[1].Request.Body, got.Body)
//
// # Where the recordings are
//
// They live beside the checkout (/work/shared/fixtures), never inside it.
// [Dir] finds them by walking up from the test's directory and skips the
// test, saying why, when there is no shared/fixtures/providers above it.
//
// # Formats
//
// [Cassette] reads go-vcr v2 cassettes (fantasy/*.yaml), [HTTPRR]
// langchaingo's raw traces (langchaingo/*.httprr), [Chunks] and [SSE]
// vercel-ai's one-payload-per-line stream recordings, [ReadFile] anything
// else (whole response bodies). All report a malformed file as a test
// failure naming it.
//
// # Replaying
//
// A [Server] answers the n-th request with the n-th [Answer] and keeps what
// it received. Event streams are written in small flushed pieces, so the
// client meets lines and events split across reads as on a real
// connection. A request beyond the last answer fails the test. An answer
// can also stall (stay silent until the client leaves; [Server.WaitClosed]
// shows that it did) or cut the connection mid-body, for the failure
// modes no recording shows.
//
// # Reading the adapter's answer
//
// [Drain] reads a provider's stream to its end, checking the event
// contract of llm.Provider (one done event, last; deltas and tool-call
// events adding up to its message), and returns what was streamed and the
// error that ended it. [Send] runs a request through Complete or Stream.
package fixturetest
