package plugindir

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch keeps the Dir current until ctx ends: a .wasm file or describe
// sidecar added, replaced or removed in the plugins directory, or the
// manifest edited (by `autoagent tools approve`/`revoke` or by hand), or
// the trust store ([Options.Trust]) changed, triggers a [Dir.Reload] once the burst of file events has been quiet for
// [Options.Debounce]. Watch reloads once when it starts, so nothing that
// changed since [Open] is missed.
//
// It yields each reload that changed something, and errors that do not end
// the watch: a manifest that does not load (the previous tool set stays
// until the file is fixed) or an event queue overflow (a full rescan
// follows). It returns when ctx ends, when yield returns false, or after
// yielding an error that prevents watching (the directory cannot be
// watched). No goroutine outlives it. The sequence is single-use per call.
//
// The plugins directory must exist when Watch starts.
func (d *Dir) Watch(ctx context.Context) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			yield(Change{}, fmt.Errorf("host: watching plugins: %w", err))
			return
		}
		defer w.Close()

		pluginDir, err := filepath.Abs(d.opts.Dir)
		if err != nil {
			yield(Change{}, fmt.Errorf("host: watching plugins: %w", err))
			return
		}
		manifestPath, err := filepath.Abs(d.opts.Manifest)
		if err != nil {
			yield(Change{}, fmt.Errorf("host: watching plugins: %w", err))
			return
		}
		// The manifest is replaced by rename, so its directory is watched,
		// and through a symbolic link the directory that really changes.
		manifestDirs := []string{filepath.Dir(manifestPath)}
		if real, err := filepath.EvalSymlinks(manifestPath); err == nil && filepath.Dir(real) != manifestDirs[0] {
			manifestDirs = append(manifestDirs, filepath.Dir(real))
		}
		watched := map[string]bool{}
		for _, dir := range append([]string{pluginDir}, manifestDirs...) {
			if watched[dir] {
				continue
			}
			if err := w.Add(dir); err != nil {
				yield(Change{}, fmt.Errorf("host: watching %s: %w", dir, err))
				return
			}
			watched[dir] = true
		}
		// The trust store too, when there is one: trusting or untrusting
		// the manifest changes what counts while a host serves. A store
		// whose directory does not exist yet is not watched.
		trustPath := ""
		if d.opts.Trust != nil {
			trustPath = filepath.Clean(d.opts.Trust.Path)
			if dir := filepath.Dir(trustPath); !watched[dir] && w.Add(dir) == nil {
				watched[dir] = true
			}
		}
		manifestName := filepath.Base(manifestPath)
		relevant := func(ev fsnotify.Event) bool {
			if trustPath != "" && ev.Name == trustPath {
				return true
			}
			dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
			if ev.Name == pluginDir || watched[ev.Name] {
				return true // the directory itself went away or was renamed
			}
			if dir == pluginDir && !strings.HasPrefix(name, ".") &&
				(strings.HasSuffix(name, ".wasm") || strings.HasSuffix(name, ".tool.json")) {
				return true
			}
			if name == manifestName {
				for _, md := range manifestDirs {
					if dir == md {
						return true
					}
				}
			}
			return false
		}

		reload := func() bool {
			ch, err := d.Reload(ctx)
			if ctx.Err() != nil {
				return false
			}
			if err != nil {
				return yield(Change{}, err)
			}
			if !ch.Empty() {
				return yield(ch, nil)
			}
			return true
		}
		if !reload() {
			return
		}

		var (
			timer    = time.NewTimer(time.Hour)
			pending  bool
			deadline time.Time // the latest a pending reload may wait
		)
		timer.Stop()
		defer timer.Stop()
		schedule := func() {
			now := time.Now()
			if !pending {
				pending, deadline = true, now.Add(10*d.opts.Debounce)
			}
			wait := min(d.opts.Debounce, max(deadline.Sub(now), 0))
			timer.Reset(wait)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if relevant(ev) {
					schedule()
				}
			case <-d.listChanged:
				// A module said its tools changed: the reload reads them.
				schedule()
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if !yield(Change{}, fmt.Errorf("host: watching plugins: %w", err)) {
					return
				}
				schedule()
			case <-timer.C:
				pending = false
				if !reload() {
					return
				}
			}
		}
	}
}
