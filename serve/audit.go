package serve

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// auditEntry is one line of the server's audit log (Dir/audit.jsonl):
// who decided a call, cancelled a run or started an eval. Approvals and revocations of
// modules go to the manifest's own audit log, with the same `by`.
type auditEntry struct {
	Time    time.Time `json:"time"`
	Action  string    `json:"action"` // decide | cancel | eval
	By      string    `json:"by"`
	Run     string    `json:"run,omitempty"`
	Eval    string    `json:"eval,omitempty"`
	File    string    `json:"file,omitempty"`
	CallID  string    `json:"call_id,omitempty"`
	Approve *bool     `json:"approve,omitempty"`
	Reason  string    `json:"reason,omitempty"`
}

type auditLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

func openAudit(path string) (*auditLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("serve: audit log: %w", err)
	}
	return &auditLog{f: f, path: path}, nil
}

// write appends e and syncs it: the decision is acted on only once it is
// on record. A server without Dir has no audit log (a nil *auditLog).
func (a *auditLog) write(e auditEntry) error {
	if a == nil {
		return nil
	}
	e.Time = time.Now().UTC()
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("serve: audit log %s: %w", a.path, err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("serve: audit log %s: %w", a.path, err)
	}
	return nil
}

func (a *auditLog) Close() error { return a.f.Close() }
