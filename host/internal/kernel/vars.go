package kernel

import "fmt"

// The bounds of an instance's Extism variables.
const (
	// MaxVarBytes bounds the names and values of an instance's variables
	// together.
	MaxVarBytes = 1 << 20
	// MaxVars bounds their number: each costs a map entry beside its
	// bytes.
	MaxVars = 1024
)

// Vars are an instance's Extism variables (var_get, var_set): scratch
// state that lives as long as the instance.
type Vars struct {
	m     map[string][]byte
	bytes int
}

// Len returns the number of variables set.
func (v *Vars) Len() int { return len(v.m) }

// Get returns the value of name.
func (v *Vars) Get(name string) ([]byte, bool) {
	b, ok := v.m[name]
	return b, ok
}

// Delete removes name.
func (v *Vars) Delete(name string) {
	if old, ok := v.m[name]; ok {
		v.bytes -= len(name) + len(old)
		delete(v.m, name)
	}
}

// Set sets name to value, replacing what it held; past MaxVars or
// MaxVarBytes it sets nothing and says which bound refused it.
func (v *Vars) Set(name string, value []byte) error {
	v.Delete(name)
	if len(v.m) >= MaxVars {
		return fmt.Errorf("var_set: at most %d variables per instance", MaxVars)
	}
	if v.bytes+len(name)+len(value) > MaxVarBytes {
		return fmt.Errorf("var_set: variables are limited to 1 MiB per instance")
	}
	if v.m == nil {
		v.m = map[string][]byte{}
	}
	v.m[name] = value
	v.bytes += len(name) + len(value)
	return nil
}
