package wasmbin

// TypeKeys returns a key for each function type the module b declares,
// equal for equal types: what a runtime-wide registry of types, such as
// wazero's, holds an entry for. b must be a module Validate or Verify
// accepted; a malformed type section yields an error.
func TypeKeys(b []byte) (keys []string, err error) {
	r := &reader{b: b, p: 8, fn: -1, lim: defaultLimits}
	defer func() {
		if p := recover(); p != nil {
			de, ok := p.(decodeError)
			if !ok {
				panic(p)
			}
			keys, err = nil, de.err
		}
	}()
	for !r.eof() {
		id := r.byte()
		size := int(r.u32())
		if id != SecType {
			r.bytes(size)
			continue
		}
		n := r.count(3)
		keys = make([]string, 0, n)
		for range n {
			start := r.p
			r.byte() // 0x60
			r.bytes(r.count(1))
			r.bytes(r.count(1))
			keys = append(keys, string(b[start:r.p]))
		}
		return keys, nil
	}
	return nil, nil
}
