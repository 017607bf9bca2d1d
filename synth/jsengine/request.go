package main

import "encoding/json"

// requests builds the tool_call requests of one engine instance,
// {"name":NAME,"arguments":ARGS}, into one buffer reused by every call
// (the host copies a request out before tool_call returns, and a module
// instance runs one call at a time). The JSON head of each tool name is
// made once: a program calls the same few tools again and again, and
// quoting a name with json.Marshal cost a tenth of a call's work inside
// the sandbox. The arguments are put in as they are: they are
// what JSON.stringify would give (argsEncoder), or the host's own input,
// already valid.
type requests struct {
	buf   []byte
	heads map[string][]byte // name → `{"name":"NAME","arguments":`
}

// build returns the request calling name with args, valid until the next
// call of build.
func (r *requests) build(name string, args []byte) ([]byte, error) {
	head, ok := r.heads[name]
	if !ok {
		quoted, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		head = append(append([]byte(`{"name":`), quoted...), `,"arguments":`...)
		if r.heads == nil {
			r.heads = map[string][]byte{}
		}
		r.heads[name] = head
	}
	r.buf = append(append(append(r.buf[:0], head...), args...), '}')
	return r.buf, nil
}
