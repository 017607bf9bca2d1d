package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/loop"
)

// Read returns the content of the file at p. The read allowlist applies.
func (w *Workspace) Read(p string) ([]byte, error) {
	c, err := w.readable("read", p)
	if err != nil {
		return nil, err
	}
	data, err := w.readRegular(c)
	if err != nil {
		return nil, &PathError{Op: "read", Path: p, Err: err}
	}
	return data, nil
}

// readable cleans p and checks it against the read allowlist.
func (w *Workspace) readable(op, p string) (string, error) {
	c, err := cleanPath(p)
	if err == nil {
		err = checkExt(c, w.readExt, false)
	}
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	return c, nil
}

// writable cleans p and checks it against the write allowlist.
func (w *Workspace) writable(op, p string) (string, error) {
	c, err := cleanPath(p)
	if err == nil && c == "." {
		err = ErrIsDir
	}
	if err == nil {
		err = checkExt(c, w.writeExt, true)
	}
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	return c, nil
}

// Write replaces the file at p with data, making the directories it
// needs. The write allowlist and the size limits apply. The change is
// journaled, with the file's before-image, before it takes effect; the
// run, call and tool come from ctx ([loop.CallInfoFrom]), the reason from
// [WithReason].
func (w *Workspace) Write(ctx context.Context, p string, data []byte) (Change, error) {
	return w.write(ctx, OpWrite, p, data)
}

// Append adds data at the end of the file at p, making it when missing.
// It is journaled like Write, and written like it: the whole new file
// replaces the old.
func (w *Workspace) Append(ctx context.Context, p string, data []byte) (Change, error) {
	return w.write(ctx, OpAppend, p, data)
}

func (w *Workspace) write(ctx context.Context, op Op, p string, data []byte) (Change, error) {
	c, err := w.writable(string(op), p)
	if err != nil {
		return Change{}, err
	}
	if op == OpWrite && w.maxFile > 0 && int64(len(data)) > w.maxFile {
		return Change{}, &PathError{Op: string(op), Path: p, Err: &SizeError{Size: int64(len(data)), Limit: w.maxFile}}
	}
	if err := ctx.Err(); err != nil {
		return Change{}, err
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	before, bh, err := w.current(c)
	if err != nil {
		return Change{}, &PathError{Op: string(op), Path: p, Err: err}
	}
	if op == OpAppend {
		data = append(slices.Clip(before), data...)
	}
	if err := w.checkSize(int64(len(data)), int64(len(before))); err != nil {
		return Change{}, &PathError{Op: string(op), Path: p, Err: err}
	}
	ch := w.newChange(ctx, op, []FileChange{{Path: c, Before: bh, After: hashOf(data), MadeDirs: w.missingDirs(c)}})
	if w.swappable(bh) {
		err = w.commitSwap(ch, data, int64(len(before)))
	} else {
		err = w.commit(ch, [][]byte{before}, func() error {
			_, err := w.writeFile(c, data)
			return err
		})
	}
	if err != nil {
		return Change{}, &PathError{Op: string(op), Path: p, Err: err}
	}
	w.total += int64(len(data) - len(before))
	return *ch, nil
}

// checkSize refuses a file of size n replacing one of size old when a
// limit would be passed.
func (w *Workspace) checkSize(n, old int64) error {
	if w.maxFile > 0 && n > w.maxFile {
		return &SizeError{Size: n, Limit: w.maxFile}
	}
	if t := w.total - old + n; w.maxTotal > 0 && n > old && t > w.maxTotal {
		return &SizeError{Size: t, Limit: w.maxTotal, Total: true}
	}
	return nil
}

// missingDirs lists the directories above the clean path c that do not
// exist, outermost first: those a write will make.
func (w *Workspace) missingDirs(c string) []string {
	var missing []string
	for d := dirOf(c); d != "."; d = dirOf(d) {
		if _, err := w.root.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	slices.Reverse(missing)
	return missing
}

// Delete removes the file at p. The write allowlist applies.
func (w *Workspace) Delete(ctx context.Context, p string) (Change, error) {
	c, err := w.writable("delete", p)
	if err != nil {
		return Change{}, err
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	before, bh, err := w.current(c)
	if err == nil && bh == "" {
		err = ErrNotFound
	}
	if err != nil {
		return Change{}, &PathError{Op: "delete", Path: p, Err: err}
	}
	ch := w.newChange(ctx, OpDelete, []FileChange{{Path: c, Before: bh}})
	err = w.commit(ch, [][]byte{before}, func() error {
		if err := w.root.Remove(c); err != nil {
			return w.pathErr(c, err)
		}
		return nil
	})
	if err != nil {
		return Change{}, &PathError{Op: "delete", Path: p, Err: err}
	}
	w.total -= int64(len(before))
	return *ch, nil
}

// Rename moves the file at from to to, replacing a file there. The write
// allowlist applies to both names. Directories are not renamed.
func (w *Workspace) Rename(ctx context.Context, from, to string) (Change, error) {
	cf, err := w.writable("rename", from)
	if err != nil {
		return Change{}, err
	}
	ct, err := w.writable("rename", to)
	if err != nil {
		return Change{}, err
	}
	if cf == ct {
		return Change{}, &PathError{Op: "rename", Path: from, Err: errors.New("the source and the target are the same file")}
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	fdata, fh, err := w.current(cf)
	if err == nil && fh == "" {
		err = ErrNotFound
	}
	if err != nil {
		return Change{}, &PathError{Op: "rename", Path: from, Err: err}
	}
	tdata, th, err := w.current(ct)
	if err != nil {
		return Change{}, &PathError{Op: "rename", Path: to, Err: err}
	}
	ch := w.newChange(ctx, OpRename, []FileChange{
		{Path: cf, Before: fh},
		{Path: ct, Before: th, After: fh, MadeDirs: w.missingDirs(ct)},
	})
	ch.To = ct
	err = w.commit(ch, [][]byte{fdata, tdata}, func() error {
		if _, err := w.mkdirs(dirOf(ct)); err != nil {
			return err
		}
		if err := w.root.Rename(cf, ct); err != nil {
			return w.pathErr(cf, err)
		}
		return nil
	})
	if err != nil {
		return Change{}, &PathError{Op: "rename", Path: from, Err: err}
	}
	return *ch, nil
}

// newChange starts a change of files made for the call in ctx.
func (w *Workspace) newChange(ctx context.Context, op Op, files []FileChange) *Change {
	ch := &Change{Op: op, Files: files, Time: w.now().UTC(), Reason: capReason(reasonFrom(ctx))}
	if len(files) > 0 {
		ch.Path = files[0].Path
	}
	if ci, ok := loop.CallInfoFrom(ctx); ok {
		ch.RunID, ch.CallID, ch.Tool = ci.RunID, ci.CallID, ci.Name
	}
	return ch
}

// maxReason bounds the reason a change keeps, in bytes: a model's reason
// is a sentence, and the journal holds every one.
const maxReason = 1000

func capReason(r string) string {
	if len(r) <= maxReason {
		return r
	}
	return strings.ToValidUTF8(r[:maxReason], "") + "…"
}

// commit journals ch (its before-images, befores[i] for ch.Files[i],
// stored and the begin synced), runs apply, and records the outcome: done,
// or aborted with the files given their before-images back. The caller
// holds the lock.
func (w *Workspace) commit(ch *Change, befores [][]byte, apply func() error) error {
	for i, f := range ch.Files {
		if f.Before == "" {
			continue
		}
		if _, err := w.putBlob(befores[i]); err != nil {
			return err
		}
	}
	if err := w.begin(ch); err != nil {
		return err
	}
	return w.finish(ch, apply())
}

// begin writes the journal line that begins ch, synced.
func (w *Workspace) begin(ch *Change) error {
	ch.ID = len(w.state.changes) + 1
	if err := w.appendRecord(record{K: "begin", ID: ch.ID, Change: ch}, true); err != nil {
		return err
	}
	crashPoint("begun")
	return nil
}

// finish records the outcome of ch, whose application returned err:
// done, or aborted with its files given their before-images back.
func (w *Workspace) finish(ch *Change, err error) error {
	if err != nil {
		if rerr := w.restoreBefore(ch); rerr != nil {
			return errors.Join(err, rerr)
		}
		return errors.Join(err, w.appendRecord(record{K: "abort", ID: ch.ID}, false))
	}
	crashPoint("applied")
	if err := w.appendRecord(record{K: "done", ID: ch.ID}, false); err != nil {
		return err
	}
	ch.State = Done
	return nil
}

// swappable reports whether a write over a file whose content hashes to
// bh goes through commitSwap: the before-image is not stored yet, the
// file system can exchange two files, and the workspace does not sync
// (a synced change copies its image, which Sync's order is argued for).
func (w *Workspace) swappable(bh string) bool {
	if !canSwap || w.noSwap || w.sync || bh == "" {
		return false
	}
	if _, ok := w.known[bh]; ok {
		return false
	}
	present, err := w.blobPresent(bh)
	return err == nil && !present
}

// commitSwap journals and applies the write ch of data over a file whose
// before-image is not stored, without copying it: the new content is
// written to tmp/<before hash>, the change begun, the two files
// exchanged in one step (the file holds the new content, tmp/<before
// hash> the old one), and the old one renamed into the store, where it is
// the before-image. No moment shows a reader a missing or half-written
// file. A crash after the exchange leaves the before-image in tmp under
// its hash, where restore finds it. The caller holds the lock.
func (w *Workspace) commitSwap(ch *Change, data []byte, size int64) error {
	f := ch.Files[0]
	if err := w.createTempAs(f.Before, data); err != nil {
		return err
	}
	if err := w.begin(ch); err != nil {
		w.removeTemp(f.Before)
		return err
	}
	err := w.swapTemp(f.Before, f.Path)
	switch {
	case errors.Is(err, errNoSwap):
		// Learnt once: copy the image, then rename over the file.
		w.noSwap = true
		var before []byte
		if before, err = w.readRegular(f.Path); err == nil && hashOf(before) != f.Before {
			err = fmt.Errorf("%s changed while it was being written", f.Path)
		}
		if err == nil {
			_, err = w.putBlob(before)
		}
		if err == nil {
			err = w.placeTemp(f.Before, f.Path)
		}
	case err == nil:
		crashPoint("swapped")
		if !w.tempIsFile(f.Before, size) {
			// What was swapped out is not the file read under the lock:
			// something outside replaced it. Put it back, untouched.
			err = fmt.Errorf("%s changed while it was being written", f.Path)
			if serr := w.swapTemp(f.Before, f.Path); serr != nil {
				return errors.Join(err, w.finish(ch, serr))
			}
			w.removeTemp(f.Before)
			return errors.Join(err, w.appendRecord(record{K: "abort", ID: ch.ID}, false))
		}
		// From here the before-image is in tmp, under its hash, until
		// it is in the store: restore finds it in either.
		if err = w.placeBlob(f.Before, f.Before); err == nil {
			w.remember(f.Before)
		}
		return w.finish(ch, err)
	}
	if err != nil {
		w.removeTemp(f.Before)
	}
	return w.finish(ch, err)
}

// CheckRead refuses a sandboxed module's read of the file at rel under an
// fs.workspace grant (host.ReadChecker) when the workspace's Read would
// refuse it: the read allowlist, the fence, the journal's directory and
// the protected files apply to modules as to Go tools.
func (w *Workspace) CheckRead(_ context.Context, rel string) error {
	c, err := w.readable("read", rel)
	if err != nil {
		return err
	}
	if err := w.fence(c); err != nil {
		return &PathError{Op: "read", Path: rel, Err: err}
	}
	return nil
}

// Workspace meets host.Journal (its Before) and host.ReadChecker (its
// CheckRead) without importing host.
var _ interface {
	Before(ctx context.Context, rel string) error
	CheckRead(ctx context.Context, rel string) error
} = (*Workspace)(nil)

// swapHook, set by tests only, makes an exchange fail as on a file
// system that cannot do it when it returns true.
var swapHook func() bool

// crashHook, set by tests only, runs at the points of commit where a
// crash is hardest to recover from.
var crashHook func(stage string)

func crashPoint(stage string) {
	if crashHook != nil {
		crashHook(stage)
	}
}

// Before journals the file at rel before a sandboxed module changes it
// under an fs.workspace grant (host.Journal). The fence and the write
// allowlist apply, and the file must be a regular one with one link, or
// absent; a refusal refuses the module's operation. The module's change
// is not seen, so its after-image is unknown: a rollback of it restores
// the before-image as long as no later change touched the file. A
// symbolic link at rel is refused ([ErrLink]): the journal cannot put a
// link back, so a module may not delete or replace one.
func (w *Workspace) Before(ctx context.Context, rel string) error {
	c, err := w.writable("write", rel)
	if err != nil {
		return err
	}
	unlock, err := w.acquire()
	if err != nil {
		return err
	}
	defer unlock()
	before, bh, err := w.current(c)
	if err != nil {
		return &PathError{Op: "write", Path: rel, Err: err}
	}
	ch := w.newChange(ctx, OpModule, []FileChange{{Path: c, Before: bh, AfterUnknown: true}})
	return w.commit(ch, [][]byte{before}, func() error { return nil })
}

// Entry describes a file or directory of the workspace.
type Entry struct {
	Name    string    `json:"name"` // the path given to Stat, or the name in a List
	Dir     bool      `json:"dir,omitempty"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// Special: a link, FIFO, device or socket, which the workspace does
	// not read or write.
	Special bool `json:"special,omitempty"`
}

// Stat describes the file or directory at p.
func (w *Workspace) Stat(p string) (Entry, error) {
	c, err := cleanPath(p)
	if err == nil {
		err = w.fence(c)
	}
	if err != nil {
		return Entry{}, &PathError{Op: "stat", Path: p, Err: err}
	}
	fi, err := w.root.Stat(c)
	if err != nil {
		return Entry{}, &PathError{Op: "stat", Path: p, Err: w.pathErr(c, err)}
	}
	return entryOf(p, fi), nil
}

func entryOf(name string, fi fs.FileInfo) Entry {
	return Entry{Name: name, Dir: fi.IsDir(), Size: fi.Size(), ModTime: fi.ModTime().UTC(),
		Special: !fi.IsDir() && !fi.Mode().IsRegular()}
}

// List describes the entries of the directory at p ("." is the root),
// sorted by name. The journal directory is not listed.
func (w *Workspace) List(p string) ([]Entry, error) {
	c, err := cleanPath(p)
	if err == nil {
		err = w.fence(c)
	}
	if err != nil {
		return nil, &PathError{Op: "list", Path: p, Err: err}
	}
	des, err := fs.ReadDir(w.root.FS(), c)
	if err != nil {
		return nil, &PathError{Op: "list", Path: p, Err: w.pathErr(c, err)}
	}
	var out []Entry
	for _, d := range des {
		if reserved(d.Name()) {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue
		}
		out = append(out, entryOf(d.Name(), fi))
	}
	return out, nil
}

func dirOf(c string) string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == '/' {
			return c[:i]
		}
	}
	return "."
}
