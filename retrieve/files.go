package retrieve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/bm25"
	"github.com/autoagent-go/autoagent/internal/rank"
	"github.com/autoagent-go/autoagent/internal/safefile"
)

// The defaults of [FilesOptions].
const (
	DefaultMaxFileBytes  = 1 << 20
	DefaultMaxFiles      = 10_000
	DefaultMaxTotalBytes = 64 << 20
	DefaultChunkBytes    = 1200
)

// FilesOptions configures [OpenFiles]. The zero value indexes up to 10 000
// files of at most 1 MiB each (64 MiB in all), in chunks of about 1 200
// bytes, lexically, as untrusted content.
type FilesOptions struct {
	// MaxFileBytes skips larger files (noted in Skipped); 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxFiles stops the walk after this many files looked at, indexed or
	// skipped (noted); 0 means DefaultMaxFiles.
	MaxFiles int
	// MaxTotalBytes stops the walk once the files read, indexed or not,
	// add up to this (noted); 0 means DefaultMaxTotalBytes.
	MaxTotalBytes int64
	// ChunkBytes is the size a chunk of a document grows to, whole lines
	// at a time (a longer line is cut); 0 means DefaultChunkBytes.
	ChunkBytes int
	// Trusted says the user wrote these documents: their passages are
	// not framed as data and do not taint the run.
	Trusted bool
	// Embed, when set, embeds every chunk when the directory is opened
	// and each query: Retrieve then fuses the BM25 and the cosine
	// rankings (RRF). Store keeps the vectors (NewMemStore when nil).
	Embed Embedder
	Store Store
}

// Skipped is a file [OpenFiles] did not index, and why.
type Skipped struct {
	Path   string `json:"path"` // slash-separated, relative to the directory
	Reason string `json:"reason"`
}

// Files is a [Retriever] over the text files of a directory, read once
// when it is opened. Safe for concurrent use.
type Files struct {
	dir     string
	opts    FilesOptions
	chunks  []Passage // by id-1
	skipped []Skipped
	bytes   int64

	mu  sync.Mutex // bm25.Index reuses scratch space while scoring
	idx *bm25.Index
}

var _ Retriever = (*Files)(nil)

// errStop ends the walk once a bound is reached.
var errStop = errors.New("stop")

// OpenFiles indexes the text files under dir. Everything is read through
// an os.Root opened at dir: a symbolic link leading out of it, a linked
// directory, a file that is not regular (a FIFO, a device), a binary
// file (a NUL byte or invalid UTF-8) and a file over MaxFileBytes are
// skipped, each noted in Skipped; directories whose name starts with a
// dot (.git) are not entered. An error means dir cannot be read at all,
// or embedding failed.
func OpenFiles(ctx context.Context, dir string, opts FilesOptions) (*Files, error) {
	if opts.MaxFileBytes < 0 || opts.MaxFiles < 0 || opts.MaxTotalBytes < 0 || opts.ChunkBytes < 0 {
		return nil, fmt.Errorf("%w: FilesOptions bounds are negative; want 0 (the default) or more", ErrInvalid)
	}
	opts.MaxFileBytes = cmpOr(opts.MaxFileBytes, DefaultMaxFileBytes)
	opts.MaxFiles = cmpOr(opts.MaxFiles, DefaultMaxFiles)
	opts.MaxTotalBytes = cmpOr(opts.MaxTotalBytes, DefaultMaxTotalBytes)
	opts.ChunkBytes = cmpOr(opts.ChunkBytes, DefaultChunkBytes)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("retrieve: the documents directory: %w", err)
	}
	defer root.Close()
	f := &Files{dir: dir, opts: opts, idx: bm25.New()}
	files := 0
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			f.skip(name, "cannot be read: "+err.Error())
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if name != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			st, err := root.Stat(name)
			switch {
			case err != nil:
				f.skip(name, "a symbolic link leading out of the directory, or to nothing")
				return nil
			case st.IsDir():
				f.skip(name, "a linked directory: not followed")
				return nil
			}
		}
		// Every file looked at counts, indexed or skipped: a directory of
		// countless binary files is bounded too.
		if files == opts.MaxFiles {
			f.skip(name, fmt.Sprintf("past the bound of %d files: this file and the rest not indexed (FilesOptions.MaxFiles)", opts.MaxFiles))
			return errStop
		}
		files++
		b, err := safefile.ReadIn(root, name, opts.MaxFileBytes)
		switch {
		case errors.Is(err, safefile.ErrTooLarge):
			f.skip(name, fmt.Sprintf("larger than %d bytes (FilesOptions.MaxFileBytes)", opts.MaxFileBytes))
			return nil
		case errors.Is(err, safefile.ErrNotRegular):
			f.skip(name, "not a regular file")
			return nil
		case err != nil:
			f.skip(name, "cannot be read: "+err.Error())
			return nil
		}
		// Every byte read counts, indexed or not.
		if f.bytes+int64(len(b)) > opts.MaxTotalBytes {
			f.skip(name, fmt.Sprintf("past the bound of %d bytes in all: this file and the rest not indexed (FilesOptions.MaxTotalBytes)", opts.MaxTotalBytes))
			return errStop
		}
		f.bytes += int64(len(b))
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			f.skip(name, "binary: not UTF-8 text")
			return nil
		}
		f.add(name, string(b))
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("retrieve: reading %s: %w", dir, err)
	}
	if opts.Embed != nil {
		if err := f.embedAll(ctx); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func cmpOr[T int | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (f *Files) skip(name, reason string) {
	f.skipped = append(f.skipped, Skipped{Path: name, Reason: reason})
}

// add cuts the document text of name into chunks of whole lines (a line
// longer than a chunk is cut) and indexes them.
func (f *Files) add(name, text string) {
	max := f.opts.ChunkBytes
	var b strings.Builder
	lineNo, first, last := 0, 0, 0
	flush := func() {
		if strings.TrimSpace(b.String()) != "" {
			src := name + ":" + strconv.Itoa(first)
			if last > first {
				src += "-" + strconv.Itoa(last)
			}
			f.chunks = append(f.chunks, Passage{Source: src, Text: strings.TrimRight(b.String(), "\r\n"), Untrusted: !f.opts.Trusted})
			f.idx.Add(int64(len(f.chunks)), name+" "+b.String())
		}
		b.Reset()
	}
	for l := range strings.Lines(text) {
		lineNo++
		for len(l) > max {
			flush()
			cut := cutAt(l, max)
			first, last = lineNo, lineNo
			b.WriteString(l[:cut])
			flush()
			l = l[cut:]
		}
		if b.Len()+len(l) > max {
			flush()
		}
		if b.Len() == 0 {
			first = lineNo
		}
		b.WriteString(l)
		last = lineNo
	}
	flush()
}

// cutAt returns where to cut s to at most max bytes: at its last space
// within them when there is one, else at a rune boundary.
func cutAt(s string, max int) int {
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if sp := strings.LastIndexAny(s[:i], " \t"); sp > max/2 {
		return sp + 1
	}
	if i == 0 {
		_, n := utf8.DecodeRuneInString(s)
		return n
	}
	return i
}

// embedAll embeds every chunk into the store.
func (f *Files) embedAll(ctx context.Context) error {
	if f.opts.Store == nil {
		f.opts.Store = NewMemStore()
	}
	if len(f.chunks) == 0 {
		return nil
	}
	texts := make([]string, len(f.chunks))
	ids := make([]int64, len(f.chunks))
	for i, c := range f.chunks {
		texts[i], ids[i] = c.Text, int64(i+1)
	}
	vecs, err := f.opts.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		return fmt.Errorf("retrieve: embedding %s: %w", f.dir, err)
	}
	return f.opts.Store.Add(ctx, ids, vecs)
}

// Skipped returns the files not indexed, and why, in walk order.
func (f *Files) Skipped() []Skipped { return slices.Clone(f.skipped) }

// Len is the number of chunks indexed.
func (f *Files) Len() int { return len(f.chunks) }

// ErrEmbed is wrapped by Retrieve's error when the query could not be
// embedded: the passages it returns with it are ranked by BM25 alone.
var ErrEmbed = errors.New("retrieve: embedding the query failed; ranked lexically")

// Retrieve implements [Retriever]: the k chunks best ranked by BM25, fused
// with the cosine ranking when FilesOptions.Embed is set. When the query
// cannot be embedded it returns the lexical ranking with an error
// wrapping ErrEmbed.
func (f *Files) Retrieve(ctx context.Context, query string, k int) ([]Passage, error) {
	if k <= 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	depth := k
	if f.opts.Embed != nil {
		depth = max(100, 10*k) // the rank window fact recall fuses
	}
	f.mu.Lock()
	list := f.idx.ScoreList(query)
	f.mu.Unlock()
	slices.SortFunc(list, func(a, b bm25.Scored) int { return byScore(rank.Scored(a), rank.Scored(b)) })
	list = list[:min(depth, len(list))]
	if f.opts.Embed == nil {
		out := make([]Passage, len(list))
		for i, s := range list {
			out[i] = f.chunks[s.ID-1]
			out[i].Score = s.Score
		}
		return out, nil
	}
	lexical := make([]int64, len(list))
	for i, s := range list {
		lexical[i] = s.ID
	}
	var embedErr error
	var semantic []int64
	qv, err := f.opts.Embed(ctx, []string{query})
	if err == nil && len(qv) != 1 {
		err = fmt.Errorf("%d vectors for one query", len(qv))
	}
	if err == nil {
		var hits []rank.Scored
		if hits, err = f.opts.Store.Search(ctx, qv[0], depth); err == nil {
			for _, h := range hits {
				if h.ID >= 1 && h.ID <= int64(len(f.chunks)) {
					semantic = append(semantic, h.ID)
				}
			}
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		embedErr = fmt.Errorf("%w: %w", ErrEmbed, err)
	}
	fused := rank.FuseRRFScored(lexical, semantic)
	out := make([]Passage, 0, min(k, len(fused)))
	for _, s := range fused[:min(k, len(fused))] {
		p := f.chunks[s.ID-1]
		p.Score = s.Score
		out = append(out, p)
	}
	return out, embedErr
}
