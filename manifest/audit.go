package manifest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"time"
)

// The actions of audit [AuditEntry] values.
const (
	ActionApprove = "approve"
	ActionRevoke  = "revoke"
	// ActionPull records a module pulled into the plugins directory as
	// pending ([Store.RecordPull]): nothing was approved.
	ActionPull = "pull"
)

// AuditEntry is one line of the audit log (JSON Lines, beside the manifest,
// [Store.LogPath]): who changed which approval, when. The log is only
// appended to, under the manifest's lock, after the manifest is written.
type AuditEntry struct {
	Time   time.Time `json:"time"`
	Action string    `json:"action"` // ActionApprove or ActionRevoke
	By     string    `json:"by"`
	SHA256 string    `json:"sha256"`
	File   string    `json:"file"`
	Name   string    `json:"name"`
	// Grants are the approval's grants (for a revoke: those it had).
	Grants []Grant `json:"grants"`
	Limits Limits  `json:"limits,omitzero"`
	Note   string  `json:"note,omitempty"`
	// Forced are grants approved beyond the module's request with Force.
	Forced []Grant `json:"forced,omitempty"`
	// SidecarSHA256 is the pinned describe sidecar's sum, if any.
	SidecarSHA256 string `json:"sidecar_sha256,omitempty"`
	// Replaced reports that these bytes had an approval this one replaced.
	Replaced bool `json:"replaced,omitempty"`
	// Reference and Digest are the OCI source of an approval or a pull
	// ([Source]); Signer its verified signer.
	Reference string `json:"reference,omitempty"`
	Digest    string `json:"digest,omitempty"`
	Signer    string `json:"signer,omitempty"`
	// Unsigned reports a pull whose signature was not verified
	// (--allow-unsigned).
	Unsigned bool `json:"unsigned,omitempty"`
}

func recordOf(action string, e Entry, by string, at time.Time) AuditEntry {
	return AuditEntry{
		Time: at.UTC(), Action: action, By: by, SHA256: e.SHA256, File: e.File, Name: e.Name,
		Grants: canonicalGrants(e.Grants), Limits: e.Limits, Note: e.Note, SidecarSHA256: e.SidecarSHA256,
		Reference: e.Source.Reference, Digest: e.Source.Digest, Signer: e.Source.Signer,
	}
}

// appendLog appends recs as JSON lines in one write and flushes them.
func appendLog(path string, recs []AuditEntry) error {
	if len(recs) == 0 {
		return nil
	}
	var buf []byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadLog returns the records of the audit log at path, oldest first. A
// missing log yields nothing. A line that does not parse yields an error
// naming the line, and the sequence goes on with the next. The sequence
// reads the file as it is iterated and can be ranged over more than once.
func ReadLog(path string) iter.Seq2[AuditEntry, error] {
	return func(yield func(AuditEntry, error) bool) {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			yield(AuditEntry{}, fmt.Errorf("manifest: audit log: %w", err))
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for line := 1; sc.Scan(); line++ {
			var r AuditEntry
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				if !yield(AuditEntry{}, fmt.Errorf("manifest: audit log %s:%d: %w", path, line, err)) {
					return
				}
				continue
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(AuditEntry{}, fmt.Errorf("manifest: audit log %s: %w", path, err))
		}
	}
}
