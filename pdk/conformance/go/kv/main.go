// Command kv is the key-value conformance module of the Go PDK
// (pdk/conformance/SPEC.md, "The kv module"): one tool per operation of
// the kv capability, so that capabilities_test.go can check that every
// PDK stores, reads, lists and deletes keys with the same results.
package main

import (
	"context"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

type setIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the kv namespace; empty or absent for the module's only one"`
	Key       string `json:"key" jsonschema:"the key"`
	Value     string `json:"value" jsonschema:"the value to store"`
}

type keyIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the kv namespace; empty or absent for the module's only one"`
	Key       string `json:"key" jsonschema:"the key"`
}

type keysIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the kv namespace; empty or absent for the module's only one"`
	Prefix    string `json:"prefix,omitempty" jsonschema:"list only the keys starting with this; empty or absent for all"`
}

type getOut struct {
	Found bool   `json:"found" jsonschema:"whether the key holds a value"`
	Value string `json:"value" jsonschema:"the value, empty when not found"`
}

type keysOut struct {
	Keys []string `json:"keys" jsonschema:"the keys, in byte order"`
}

func kvSet(_ context.Context, in setIn) (string, error) {
	if err := pdk.KV(in.Namespace).Set(in.Key, []byte(in.Value)); err != nil {
		return "", err
	}
	return "stored", nil
}

func kvGet(_ context.Context, in keyIn) (getOut, error) {
	v, found, err := pdk.KV(in.Namespace).Get(in.Key)
	return getOut{Found: found, Value: string(v)}, err
}

func kvDelete(_ context.Context, in keyIn) (string, error) {
	if err := pdk.KV(in.Namespace).Delete(in.Key); err != nil {
		return "", err
	}
	return "deleted", nil
}

func kvKeys(_ context.Context, in keysIn) (keysOut, error) {
	keys, err := pdk.KV(in.Namespace).Keys(in.Prefix)
	if keys == nil {
		keys = []string{}
	}
	return keysOut{Keys: keys}, err
}

func init() {
	pdk.Register(
		pdk.NewTool("kv_set", "Stores a value under a key.", kvSet),
		pdk.NewTool("kv_get", "Reads the value stored under a key.", kvGet),
		pdk.NewTool("kv_delete", "Removes a key.", kvDelete),
		pdk.NewTool("kv_keys", "Lists the keys that start with a prefix.", kvKeys),
	)
	pdk.RequestCapabilities("kv")
}

func main() {}
