package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"math"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
)

// keyVersion changes when the key's layout does, so an old file's
// entries miss rather than answer another request.
const keyVersion = "autoagent-cache-v1"

// Key returns the cache key of req: the hex sha256 of its canonical
// form (see the package doc). Every field of the request is written,
// each string with its length before it, so no two requests share a
// form; TestKeyCoversEveryField fails when package llm gains a field
// this does not write.
func (c *Cache) Key(req *llm.Request) string {
	w := keyPool.Get().(*keyWriter)
	defer keyPool.Put(w)
	w.h.Reset()
	w.b = w.b[:0]
	w.str(keyVersion)
	w.str(c.name)
	w.request(req)
	w.h.Write(w.b)
	var sum [sha256.Size]byte
	return hex.EncodeToString(w.h.Sum(sum[:0]))
}

// keyWriter hashes a request's canonical form, through a small buffer:
// a large string (an image, a long tool result) goes to the hash as it
// is, never copied into the buffer.
type keyWriter struct {
	h   hash.Hash
	b   []byte
	tmp bytes.Buffer
}

// keyBuffer is the buffer's size.
const keyBuffer = 4 << 10

var keyPool = sync.Pool{New: func() any { return &keyWriter{h: sha256.New(), b: make([]byte, 0, keyBuffer)} }}

// large writes p, too large for the buffer, to the hash.
func (w *keyWriter) large(p []byte) {
	w.h.Write(w.b)
	w.b = w.b[:0]
	w.h.Write(p)
}

func (w *keyWriter) int(n int64) { w.b = binary.AppendVarint(w.b, n) }

func (w *keyWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *keyWriter) str(s string) {
	w.int(int64(len(s)))
	if len(w.b)+len(s) > keyBuffer {
		w.large([]byte(s))
		return
	}
	w.b = append(w.b, s...)
}

func (w *keyWriter) bytes(b []byte) {
	w.int(int64(len(b)))
	if len(w.b)+len(b) > keyBuffer {
		w.large(b)
		return
	}
	w.b = append(w.b, b...)
}

// json writes raw JSON without its insignificant whitespace; JSON that
// does not parse is written as it is.
func (w *keyWriter) json(raw json.RawMessage) {
	w.tmp.Reset()
	if json.Compact(&w.tmp, raw) != nil {
		w.bytes(raw)
		return
	}
	w.bytes(w.tmp.Bytes())
}

func (w *keyWriter) request(r *llm.Request) {
	w.str(r.Model)
	w.int(int64(len(r.Messages)))
	for i := range r.Messages {
		w.message(&r.Messages[i])
	}
	w.int(int64(len(r.Tools)))
	for i := range r.Tools {
		t := &r.Tools[i]
		w.str(t.Name)
		w.str(t.Description)
		w.json(t.InputSchema)
		w.json(t.OutputSchema)
	}
	w.str(r.ToolChoice.Mode)
	w.str(r.ToolChoice.Name)
	w.bool(r.Temperature != nil)
	if r.Temperature != nil {
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(*r.Temperature))
	}
	w.int(int64(r.MaxTokens))
	w.bool(r.ResponseFormat != nil)
	if f := r.ResponseFormat; f != nil {
		w.str(f.Type)
		w.str(f.Name)
		w.str(f.Description)
		w.json(f.Schema)
		w.bool(f.Strict)
	}
}

func (w *keyWriter) message(m *llm.Message) {
	w.str(string(m.Role))
	w.int(int64(len(m.Parts)))
	for i := range m.Parts {
		p := &m.Parts[i]
		w.str(string(p.Type))
		w.str(p.Text)
		w.str(p.Signature)
		w.str(p.Redacted)
		w.bool(p.Image != nil)
		if img := p.Image; img != nil {
			w.str(img.MIMEType)
			w.bytes(img.Data)
			w.str(img.URL)
		}
		w.bool(p.ToolCall != nil)
		if c := p.ToolCall; c != nil {
			w.str(c.ID)
			w.str(c.Name)
			w.json(c.Arguments)
		}
		w.bool(p.ToolResult != nil)
		if r := p.ToolResult; r != nil {
			w.str(r.CallID)
			w.str(r.Name)
			w.str(r.Content)
			w.bool(r.IsError)
			w.str(r.Refusal)
			w.bool(r.Untrusted)
		}
	}
}
