package cache

import (
	"bufio"
	"bytes"
	"container/list"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/autoagent-go/autoagent/internal/atomicfile"
	"github.com/autoagent-go/autoagent/llm"
)

// ErrNotCache is wrapped by Open's error for a file that is not a
// cache's: it is left as it is.
var ErrNotCache = errors.New("cache: not a response cache file")

// header is a cache file's first line.
const header = `{"autoagent_response_cache":1}`

// maxLine bounds one line read from a file: an answer larger than this
// is not stored (see put), so a longer line is not one of ours.
const maxLine = 16 << 20

// entry is one stored answer.
type entry struct {
	key  string
	at   time.Time
	resp *llm.Response
	size int64 // its line's length
	elem *list.Element
}

// line is an entry's form in the file.
type line struct {
	Key      string        `json:"key"`
	At       time.Time     `json:"at"`
	Response *llm.Response `json:"response"`
}

// store holds the entries, least recently used first in lru, and
// appends each new one to the file, if any. The Cache's mutex guards it.
type store struct {
	opts      Options
	byKey     map[string]*entry
	lru       *list.List
	bytes     int64 // the live entries' lines
	f         *os.File
	fileBytes int64 // the file's length, dead lines included
	closed    bool

	hits, misses int
	unsigned     int // entries of the file Options.Key did not sign
}

func openStore(opts Options) (*store, error) {
	s := &store{opts: opts, byKey: map[string]*entry{}, lru: list.New()}
	if opts.File == "" {
		return s, nil
	}
	f, err := os.OpenFile(opts.File, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if err := s.load(f); err != nil {
		f.Close()
		return nil, err
	}
	if s.fileBytes == 0 {
		if _, err := f.WriteString(header + "\n"); err != nil {
			f.Close()
			return nil, fmt.Errorf("cache: %w", err)
		}
		s.fileBytes = int64(len(header) + 1)
	}
	s.f = f
	if s.mostlyDead() {
		if err := s.compact(); err != nil {
			s.f.Close()
			return nil, err
		}
	}
	return s, nil
}

// load reads f's entries: later lines of a key replace earlier ones,
// expired entries are dropped, and the bounds applied.
func (s *store) load(f *os.File) error {
	br := bufio.NewReaderSize(f, 64<<10)
	now := s.opts.Now()
	first := true
	for {
		raw, err := readLine(br)
		s.fileBytes += int64(len(raw))
		if first && len(raw) > 0 {
			if string(bytes.TrimSpace(raw)) != header {
				return fmt.Errorf("%w: %s does not start with the cache's header: name another file", ErrNotCache, s.opts.File)
			}
			first = false
		} else if len(raw) > 0 {
			body, ok := s.verify(raw)
			var l line
			if !ok {
				s.unsigned++
			} else if json.Unmarshal(body, &l) == nil && l.Key != "" && l.Response != nil && !s.expired(l.At, now) {
				s.insert(&entry{key: l.Key, at: l.At, resp: l.Response, size: int64(len(raw))})
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cache: reading %s: %w", s.opts.File, err)
		}
	}
}

// readLine reads one line; a line over maxLine is consumed and returned
// cut, so it does not parse.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out) < maxLine {
			out = append(out, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return out, err
		}
	}
}

// encode returns l's line in the file: its JSON, then, with a key, a tab
// and the JSON's HMAC-SHA256 in hex; and the newline.
func (s *store) encode(l line) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	if s.opts.Key != nil {
		m := hmac.New(sha256.New, s.opts.Key)
		m.Write(b)
		b = append(b, '\t')
		b = hex.AppendEncode(b, m.Sum(nil))
	}
	return append(b, '\n'), nil
}

// verify returns the JSON of a line read from the file, and whether it
// may answer: with a key, only when the key signed it. (Encoded JSON
// holds no raw tab, so the first one starts the signature.)
func (s *store) verify(raw []byte) ([]byte, bool) {
	raw = bytes.TrimRight(raw, "\r\n")
	body, sig, signed := bytes.Cut(raw, []byte{'\t'})
	if s.opts.Key == nil {
		return body, true
	}
	if !signed {
		return nil, false
	}
	want, err := hex.DecodeString(string(sig))
	if err != nil {
		return nil, false
	}
	m := hmac.New(sha256.New, s.opts.Key)
	m.Write(body)
	return body, hmac.Equal(m.Sum(nil), want)
}

func (s *store) expired(at, now time.Time) bool {
	return s.opts.TTL > 0 && now.Sub(at) > s.opts.TTL
}

// get returns the live entry of key, most recently used now.
func (s *store) get(key string, now time.Time) *entry {
	if s.closed {
		return nil
	}
	e := s.byKey[key]
	if e == nil {
		return nil
	}
	if s.expired(e.at, now) {
		s.remove(e)
		return nil
	}
	s.lru.MoveToBack(e.elem)
	return e
}

// put stores resp under key, appending it to the file.
func (s *store) put(key string, resp *llm.Response, now time.Time) {
	if s.closed {
		return
	}
	b, err := s.encode(line{Key: key, At: now, Response: resp})
	if err != nil || int64(len(b)) > s.opts.MaxBytes || len(b) > maxLine {
		return // not storable: an answer larger than the whole cache
	}
	if s.f != nil {
		if _, err := s.f.Write(b); err != nil {
			return // a cache that cannot write still answers what it holds
		}
		s.fileBytes += int64(len(b))
	}
	s.insert(&entry{key: key, at: now, resp: resp, size: int64(len(b))})
	if s.f != nil && s.mostlyDead() {
		s.compact() // on failure the log keeps growing; it still reads
	}
}

// insert adds e, replacing key's entry, and evicts the least recently
// used entries over the bounds.
func (s *store) insert(e *entry) {
	if old := s.byKey[e.key]; old != nil {
		s.remove(old)
	}
	e.elem = s.lru.PushBack(e)
	s.byKey[e.key] = e
	s.bytes += e.size
	for len(s.byKey) > s.opts.MaxEntries || s.bytes > s.opts.MaxBytes {
		s.remove(s.lru.Front().Value.(*entry))
	}
}

func (s *store) remove(e *entry) {
	s.lru.Remove(e.elem)
	delete(s.byKey, e.key)
	s.bytes -= e.size
}

// mostlyDead reports whether the file holds more than twice the live
// entries' bytes (and at least 1 MiB of dead ones).
func (s *store) mostlyDead() bool {
	dead := s.fileBytes - s.bytes - int64(len(header)+1)
	return dead > 1<<20 && dead > s.bytes
}

// compact rewrites the file with the live entries only, atomically.
func (s *store) compact() error {
	var buf bytes.Buffer
	buf.WriteString(header + "\n")
	for el := s.lru.Front(); el != nil; el = el.Next() {
		e := el.Value.(*entry)
		b, err := s.encode(line{Key: e.key, At: e.at, Response: e.resp})
		if err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		buf.Write(b)
	}
	if err := atomicfile.Write(s.opts.File, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("cache: compacting %s: %w", s.opts.File, err)
	}
	f, err := os.OpenFile(s.opts.File, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	s.f.Close()
	s.f, s.fileBytes = f, int64(buf.Len())
	return nil
}

func (s *store) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}
