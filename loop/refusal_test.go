package loop

import "testing"

// Every refusal the loop writes is one IsRefusal knows; a tool's own text
// is not.
func TestIsRefusal(t *testing.T) {
	for _, msg := range []string{
		policyDeniedMessage("no"),
		repeatedCallMessage("t", 2),
		egressBlockedMessage("send"),
		toolCallLimitMessage("t", 3),
		notOfferedMessage("t"),
		"ToolHookDenied: no",
	} {
		if !IsRefusal(msg) {
			t.Errorf("IsRefusal(%q) = false", msg)
		}
	}
	if IsRefusal("found it") || IsRefusal(" ToolPolicyDenied: quoted") {
		t.Error("a tool's own text counted as a refusal")
	}
}
