package extism

// The host functions beyond the kernel's memory and the call's input and
// output. Each is the host's function as it is, with its contract on who
// frees a block, but for Config and CallTool, which also copy the bytes
// across and free every block.

// Config returns the value of the configuration key and whether it is
// set (host/ABI.md §1.3); an empty value has no block and reads as unset.
// Both blocks are freed: config_get, unlike var_get, leaves the key to the
// caller.
func Config(key string) (string, bool) {
	k := Write([]byte(key))
	off := configGet(k)
	free(k)
	if off == 0 {
		return "", false
	}
	return string(Take(off)), true
}

// CallTool calls a host tool through tool_call (host/ABI.md §1.5):
// request is the JSON {"name":"TOOL","arguments":{...}}, the result the
// tool's MCP result JSON. The host lets through only the tools named by
// the module's tools: grants, and routes each call through the embedding
// application's policy and approval gates. Both blocks are freed.
func CallTool(request []byte) []byte {
	return CallToolInto(request, nil)
}

// CallToolInto is CallTool reading the result into buf when its capacity
// holds it (see ReadInto): a guest that calls tools in a loop and is done
// with each result before the next call reuses one buffer.
func CallToolInto(request, buf []byte) []byte {
	req := Write(request)
	res := toolCall(req)
	free(req)
	out := ReadInto(buf, res)
	free(res)
	return out
}

// VarGet returns a block with the per-instance variable named by the
// block name, or 0 when it is not set. The host frees name; the returned
// block is the caller's.
func VarGet(name uint64) uint64 { return varGet(name) }

// VarSet sets the per-instance variable named by the block name to the
// block value; a value of 0 deletes it. The host frees both blocks.
func VarSet(name, value uint64) { varSet(name, value) }

// HTTPRequest sends the request described by the block request (JSON:
// url, method, headers) with the block body (0 for none) and returns a
// block with the response body, 0 when it is empty. The host frees both
// blocks, and traps when no net: grant of the module allows the URL.
func HTTPRequest(request, body uint64) uint64 { return httpRequest(request, body) }

// HTTPStatusCode returns the status of the last response, 0 before any.
func HTTPStatusCode() int32 { return httpStatusCode() }

// LogTrace logs the message in the block msg at trace level; the host
// frees the block. LogDebug, LogInfo, LogWarn and LogError are the other
// levels: one host function each, so a module imports only the levels it
// uses.
func LogTrace(msg uint64) { logTrace(msg) }

// LogDebug logs the block msg at debug level; the host frees it.
func LogDebug(msg uint64) { logDebug(msg) }

// LogInfo logs the block msg at info level; the host frees it.
func LogInfo(msg uint64) { logInfo(msg) }

// LogWarn logs the block msg at warning level; the host frees it.
func LogWarn(msg uint64) { logWarn(msg) }

// LogError logs the block msg at error level; the host frees it.
func LogError(msg uint64) { logError(msg) }

// KVGet returns a block with the value stored under the block key in the
// namespace named by the block ns (0: the module's only kv namespace), or
// 0 when the key is absent. The caller frees ns, key and the returned
// block. A namespace the module was not granted traps.
func KVGet(ns, key uint64) uint64 { return kvGet(ns, key) }

// KVSet stores the block value under the block key in namespace ns. The
// caller frees the three blocks.
func KVSet(ns, key, value uint64) { kvSet(ns, key, value) }

// KVDelete removes the block key from namespace ns (an absent key is
// fine). The caller frees both blocks.
func KVDelete(ns, key uint64) { kvDelete(ns, key) }

// KVKeys returns a block with a JSON array of the keys of namespace ns
// that start with the block prefix (0: all keys), sorted. The caller frees
// ns, prefix and the returned block.
func KVKeys(ns, prefix uint64) uint64 { return kvKeys(ns, prefix) }
