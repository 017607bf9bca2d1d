package pdk

import (
	"encoding/json"
	"fmt"
)

// Store is a persistent key-value namespace the host keeps for the module,
// granted with kv:NAMESPACE. Values survive the instance and the process.
// A namespace that was not granted ends the call with an error from the
// host.
type Store struct {
	namespace string
}

// KV returns the store for namespace; "" names the module's only kv
// namespace, whatever it is called (the host refuses it when the module was
// granted none or several).
func KV(namespace string) Store { return Store{namespace: namespace} }

// Get returns the value stored under key and whether there is one.
func (s Store) Get(key string) ([]byte, bool, error) { return kvGet(s.namespace, key) }

// Set stores value under key, replacing any previous value.
func (s Store) Set(key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	return kvSet(s.namespace, key, value)
}

// Delete removes key; deleting a missing key is not an error.
func (s Store) Delete(key string) error { return kvDelete(s.namespace, key) }

// Keys returns the keys that start with prefix, in byte order.
func (s Store) Keys(prefix string) ([]string, error) {
	doc, err := kvList(s.namespace, prefix)
	if err != nil || doc == nil {
		return nil, err
	}
	var keys []string
	if err := json.Unmarshal(doc, &keys); err != nil {
		return nil, fmt.Errorf("pdk: the host sent a malformed key list: %w", err)
	}
	return keys, nil
}
