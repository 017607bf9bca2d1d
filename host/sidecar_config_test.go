package host

import (
	"testing"
)

// A sidecar's config reaches the guest through config_get (a staged
// JavaScript tool's script travels this way); keys the application sets
// win, and a module's own describe output cannot set config.
func TestSidecarConfig(t *testing.T) {
	h, _ := newTestHost(t, Options{})
	sidecar := []byte(`{"tools":[{"name":"config","description":"Returns a config value.",
		"inputSchema":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}}],
		"config":{"greeting":"from the sidecar","app":"sidecar loses"}}`)
	l := load(t, h, "echo.wasm", Module{Name: "echo", Sidecar: sidecar, Config: map[string]string{"app": "from the application"}})
	for key, want := range map[string]string{"greeting": "from the sidecar", "app": "from the application", "other": "(unset)"} {
		if got := call(t, l, "config", `{"key":"`+key+`"}`).Text(); got != want {
			t.Errorf("config_get(%q) = %q, want %q", key, got, want)
		}
	}
	// Without a sidecar, the module's own describe is used and sets nothing.
	own := load(t, h, "echo.wasm", Module{Name: "echo2"})
	if got := call(t, own, "config", `{"key":"greeting"}`).Text(); got != "(unset)" {
		t.Errorf("config without a sidecar = %q, want (unset)", got)
	}
}
