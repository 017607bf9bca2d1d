package autoagent

import (
	"context"
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/retrieve"
)

// RetrievalConfig turns retrieval on (Config.Retrieval, package
// retrieve): before each model call, passages relevant to the current
// question, from the sources named, go before the model in one block
// bounded by Share of the context budget (retrieve.Config). The zero value
// retrieves nothing.
type RetrievalConfig struct {
	// Dirs are directories of text documents, indexed when the Runtime is
	// built (a change later is seen by the next Runtime). Their passages
	// are untrusted content: framed as data, they taint the run.
	Dirs []string
	// TrustedDirs are directories of documents the user wrote: their
	// passages are not framed and do not taint. No sandboxed tool or
	// workspace may write in them (Protects).
	TrustedDirs []string
	// Memory retrieves from the fact memory (Memory.Kind "fact") and,
	// with a session store, from the user's stored conversations
	// (Continue).
	Memory bool
	// Embeddings embeds the documents and each question with the
	// provider's own embedding endpoint (openai and its presets, gemini),
	// fusing the cosine ranking with BM25 (RRF). A provider without one
	// is an error.
	Embeddings bool
	// K, Share and MaxBytes are retrieve.Config's (0: its defaults, 8
	// passages, 0.1 of the context budget, 16 KiB).
	K        int
	Share    float64
	MaxBytes int
}

func (rc RetrievalConfig) on() bool {
	return len(rc.Dirs)+len(rc.TrustedDirs) > 0 || rc.Memory
}

// embedder is a provider with an embedding endpoint
// (openai.Provider.Embed, gemini.Provider.Embed).
type embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// maxSkipNotes bounds the notes about files a directory did not index.
const maxSkipNotes = 10

// openRetrieval builds the run's retriever from rc: model is the
// provider before any cache, whose Embed the embeddings use.
func (rt *Runtime) openRetrieval(ctx context.Context, rc RetrievalConfig, model llm.Provider) error {
	if !rc.on() {
		if rc.Embeddings {
			return fmt.Errorf("%w: Retrieval.Embeddings without a source: name Dirs, TrustedDirs or Memory", ErrConfig)
		}
		return nil
	}
	var embed retrieve.Embedder
	if rc.Embeddings {
		e, ok := model.(embedder)
		if !ok {
			return fmt.Errorf("%w: Retrieval.Embeddings: provider %T has no embedding endpoint (openai, its presets and gemini have one); retrieve lexically without it", ErrConfig, model)
		}
		embed = e.Embed
	}
	var sources []retrieve.Retriever
	open := func(dir string, trusted bool) error {
		f, err := retrieve.OpenFiles(ctx, dir, retrieve.FilesOptions{Trusted: trusted, Embed: embed})
		if err != nil {
			return fmt.Errorf("%w: Retrieval: %w", ErrConfig, err)
		}
		noteSkipped(rt.notes, dir, f.Skipped())
		sources = append(sources, f)
		return nil
	}
	for _, d := range rc.Dirs {
		if err := open(d, false); err != nil {
			return err
		}
	}
	for _, d := range rc.TrustedDirs {
		if err := open(d, true); err != nil {
			return err
		}
	}
	if rc.Memory {
		if rt.fact == nil && rt.sessions == nil {
			return fmt.Errorf("%w: Retrieval.Memory: no fact memory (Memory.Kind \"fact\") and no session store (Sessions) to retrieve from", ErrConfig)
		}
		if rt.fact != nil {
			sources = append(sources, retrieve.Facts(rt.fact))
		}
		if rt.sessions != nil {
			sources = append(sources, retrieve.Sessions(rt.sessions))
		}
	}
	r := sources[0]
	if len(sources) > 1 {
		r = retrieve.Fuse(sources...)
	}
	rt.agent.Knowledge.Retrieval = retrieve.Config{Retriever: r, K: rc.K, Share: rc.Share, MaxBytes: rc.MaxBytes}
	return rt.agent.Knowledge.Retrieval.Validate()
}

// noteSkipped tells a person which files of dir were not indexed, and
// why: the first few, then how many more.
func noteSkipped(notes io.Writer, dir string, skipped []retrieve.Skipped) {
	for i, s := range skipped {
		if i == maxSkipNotes {
			fmt.Fprintf(notes, "autoagent: retrieval: %d more files of %s not indexed\n", len(skipped)-i, termtext.Name(dir))
			return
		}
		fmt.Fprintf(notes, "autoagent: retrieval: %s not indexed: %s\n", termtext.Name(dir+"/"+s.Path), termtext.Text(s.Reason))
	}
}
