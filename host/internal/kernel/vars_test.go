package kernel

import (
	"strconv"
	"strings"
	"testing"
)

// TestVarsBounds: variables are bounded in number and in bytes (names
// and values), a refused Set leaves nothing behind, and replacing or
// deleting a variable gives its bytes back.
func TestVarsBounds(t *testing.T) {
	var v Vars
	for i := range MaxVars {
		if err := v.Set(strconv.Itoa(i), nil); err != nil {
			t.Fatalf("variable %d of %d: %v", i, MaxVars, err)
		}
	}
	if err := v.Set("one more", nil); err == nil || !strings.Contains(err.Error(), "at most 1024 variables") {
		t.Fatalf("variable %d: %v, want the count refused", MaxVars+1, err)
	}
	if _, ok := v.Get("one more"); ok {
		t.Fatal("a refused variable is set")
	}
	// Replacing a variable does not count it twice.
	if err := v.Set("0", []byte("x")); err != nil {
		t.Fatalf("replacing a variable at the count: %v", err)
	}
	for i := range MaxVars {
		v.Delete(strconv.Itoa(i))
	}
	big := make([]byte, MaxVarBytes-1)
	if err := v.Set("a", big); err != nil {
		t.Fatalf("a variable of exactly the bytes allowed: %v", err)
	}
	if err := v.Set("b", nil); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("one byte past the bytes allowed: %v", err)
	}
	if err := v.Set("a", big[:10]); err != nil {
		t.Fatalf("shrinking a variable: %v", err)
	}
	if err := v.Set("b", make([]byte, MaxVarBytes-20)); err != nil {
		t.Fatalf("the bytes a shrunk variable gave back: %v", err)
	}
	if got, ok := v.Get("a"); !ok || len(got) != 10 {
		t.Fatalf("Get(a) = %d bytes, %v", len(got), ok)
	}
}

// TestServes: the guest's extism:host/env names are the kernel's, and
// nothing else is.
func TestServes(t *testing.T) {
	for _, name := range []string{"alloc", "output_set", "config_get", "http_request", "log_error"} {
		if !Serves(name) {
			t.Errorf("Serves(%q) = false", name)
		}
	}
	for _, name := range []string{"", "fail", "kernel_state", "kernel_heap", "kv_get", "yield"} {
		if Serves(name) {
			t.Errorf("Serves(%q) = true: a guest could import the kernel's own", name)
		}
	}
}
