// Command kv is the first-party tool module that remembers values across
// runs in a persistent key-value store (capability: kv:NAMESPACE; the
// module uses the one namespace it is granted).
package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// store is the module's only kv namespace, whatever the grant names it.
var store = pdk.KV("")

// KeyInput names a key.
type KeyInput struct {
	Key string `json:"key" jsonschema:"the key (1 to 512 bytes)"`
}

// SetInput is the kv_set arguments.
type SetInput struct {
	Key   string `json:"key" jsonschema:"the key (1 to 512 bytes)"`
	Value string `json:"value" jsonschema:"the text to store (at most 1 MiB)"`
}

// ListInput is the kv_list arguments.
type ListInput struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only keys that start with this text (default: all keys)"`
}

// GetOutput is the structured result of kv_get.
type GetOutput struct {
	Key   string `json:"key"`
	Found bool   `json:"found"`
	Value string `json:"value"`
}

func checkKey(k string) error {
	if k == "" || len(k) > 512 {
		return fmt.Errorf("key must be 1 to 512 bytes, got %d", len(k))
	}
	return nil
}

func get(_ context.Context, in KeyInput) (pdk.Result, error) {
	if err := checkKey(in.Key); err != nil {
		return pdk.Result{}, err
	}
	v, ok, err := store.Get(in.Key)
	if err != nil {
		return pdk.Result{}, err
	}
	if !utf8.Valid(v) {
		return pdk.Result{}, fmt.Errorf("the value of %q is binary data, not text", in.Key)
	}
	r, err := pdk.JSON(GetOutput{Key: in.Key, Found: ok, Value: string(v)})
	if err != nil {
		return pdk.Result{}, err
	}
	text := string(v)
	if !ok {
		text = fmt.Sprintf("no value is stored under %q", in.Key)
	}
	r.Content = []pdk.Content{{Type: "text", Text: text}}
	return r, nil
}

func set(_ context.Context, in SetInput) (string, error) {
	if err := checkKey(in.Key); err != nil {
		return "", err
	}
	if err := store.Set(in.Key, []byte(in.Value)); err != nil {
		return "", err
	}
	return fmt.Sprintf("stored %d bytes under %q", len(in.Value), in.Key), nil
}

func del(_ context.Context, in KeyInput) (string, error) {
	if err := checkKey(in.Key); err != nil {
		return "", err
	}
	if err := store.Delete(in.Key); err != nil {
		return "", err
	}
	return fmt.Sprintf("deleted %q", in.Key), nil
}

// ListOutput is the structured result of kv_list.
type ListOutput struct {
	Keys []string `json:"keys"`
}

func list(_ context.Context, in ListInput) (pdk.Result, error) {
	keys, err := store.Keys(in.Prefix)
	if err != nil {
		return pdk.Result{}, err
	}
	if keys == nil {
		keys = []string{}
	}
	r, err := pdk.JSON(ListOutput{Keys: keys})
	if err != nil {
		return pdk.Result{}, err
	}
	text := fmt.Sprintf("%d keys", len(keys))
	if len(keys) > 0 {
		text += ":\n" + strings.Join(keys, "\n")
	}
	r.Content = []pdk.Content{{Type: "text", Text: text}}
	return r, nil
}

func init() {
	// The namespace is the operator's choice (kv:NAMESPACE at approval): request the kind.
	pdk.RequestCapabilities("kv")
	pdk.Register(
		pdk.NewTool("kv_get", "Read the text stored under a key in the persistent memory store (remembered across runs).", get).
			WithAnnotations(pdk.Annotations{Title: "Recall", ReadOnly: true}),
		pdk.NewTool("kv_set", "Store text under a key in the persistent memory store, replacing any previous value.", set).
			WithAnnotations(pdk.Annotations{Title: "Remember", Idempotent: true}),
		pdk.NewTool("kv_delete", "Delete a key from the persistent memory store.", del).
			WithAnnotations(pdk.Annotations{Title: "Forget", Destructive: true, Idempotent: true}),
		pdk.NewTool("kv_list", "List the keys of the persistent memory store, optionally only those starting with a prefix.", list).
			WithAnnotations(pdk.Annotations{Title: "List memories", ReadOnly: true}),
	)
}

func main() {}
