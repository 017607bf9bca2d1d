package plugindir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// ErrNotApproved is wrapped by [Plugin.Err] for a pending plugin: the
// manifest holds no approval for its exact bytes (or for its describe
// sidecar).
var ErrNotApproved = errors.New("host: not approved")

// Options configure [Open]. The zero value loads ./plugins against
// ./plugins/manifest.json, refuses tool-name conflicts, leaves pending
// modules unloaded and debounces reloads by 100 ms.
type Options struct {
	// Dir is the plugins directory; "" means "plugins". A missing
	// directory holds no plugins.
	Dir string
	// Manifest is the manifest file; "" means Dir/manifest.json.
	Manifest string
	// Trust, when set, makes the manifest's approvals count only while
	// this trust store trusts its exact content: an untrusted or changed
	// manifest leaves every module pending (quarantined under
	// Quarantine), and [Snapshot.Untrusted] says why. Nil trusts the
	// manifest as named: a program that names its manifest made that
	// decision. The CLI always sets it, since the manifest it finds in a
	// working directory is whoever wrote the checkout's.
	Trust *manifest.TrustStore
	// Quarantine loads pending modules (no approval for their bytes) with
	// no grants at all and the host's default limits, in a sandbox process
	// (Module.Isolated), instead of leaving them unloaded.
	Quarantine bool
	// MaxQuarantined bounds the modules Quarantine loads, in the order of
	// their files; the others stay pending. Each holds a sandbox process
	// (some 7 MB) as long as it is loaded, and a hundred drop-ins held a
	// hundred processes (found by attacking our own sandbox). 0 means 16.
	MaxQuarantined int
	// Namespace exposes every plugin tool as FILE__TOOL (FILE is the file
	// name without ".wasm", characters outside [A-Za-z0-9_-] replaced by
	// '_'), so modules offering the same tool name can coexist. Without it
	// a tool name offered by two plugins is a [Conflict]: neither is
	// exposed.
	Namespace bool
	// MaxModuleBytes skips (as invalid) a .wasm file larger than this; 0
	// means 256 MiB.
	MaxModuleBytes int64
	// Debounce is how long [Dir.Watch] waits for a burst of file events to
	// end before reloading; 0 means 100 ms. A steady stream of events
	// delays a reload by at most ten times this.
	Debounce time.Duration
	// OnChange, when set, is called after every reload that changed
	// something ([Dir.Reload], [Dir.Watch]), from the reloading goroutine,
	// before modules that left are closed.
	OnChange func(Change)
}

// Protected returns the directories no fs grant of a module loaded from
// this plugins directory may reach (Open refuses such a module as invalid,
// whatever its approval says): the plugins directory and the manifest's,
// where a module able to write would add modules and approve itself any
// grant (found by attacking our own sandbox: fs.write of a project
// directory holding plugins/ was every capability).
func (o Options) Protected() []manifest.Protected {
	o = o.withDefaults()
	return []manifest.Protected{
		{Dir: o.Dir, What: "the plugins directory, where a module able to write could add modules of its own"},
		{Dir: filepath.Dir(o.Manifest), What: "the manifest's directory, where a module able to write could approve itself any grant"},
	}
}

func (o Options) withDefaults() Options {
	if o.Dir == "" {
		o.Dir = "plugins"
	}
	if o.Manifest == "" {
		o.Manifest = filepath.Join(o.Dir, "manifest.json")
	}
	if o.MaxModuleBytes == 0 {
		o.MaxModuleBytes = 256 << 20
	}
	if o.MaxQuarantined == 0 {
		o.MaxQuarantined = 16
	}
	if o.Debounce == 0 {
		o.Debounce = 100 * time.Millisecond
	}
	return o
}

// Status is what became of one .wasm file of a plugins directory.
type Status string

// The statuses of docs/ARCHITECTURE.md §5.
const (
	// StatusApproved: the manifest approves these exact bytes; the module
	// is loaded with the approved grants and limits.
	StatusApproved Status = "approved"
	// StatusPending: no approval for these bytes; not loaded.
	StatusPending Status = "pending"
	// StatusQuarantined: no approval, loaded with no grants at all
	// ([Options.Quarantine]).
	StatusQuarantined Status = "quarantined"
	// StatusInvalid: not a module, a bad ABI, a failing or invalid
	// describe, or a module its approval cannot load; Err says why.
	StatusInvalid Status = "invalid"
)

// Plugin is one .wasm file of a plugins directory and what became of it.
type Plugin struct {
	// File is the file name, Path its path.
	File, Path string
	// Name is the approval's name, or the file name without ".wasm".
	Name string
	// SHA256 is the sum of the bytes read (and, when loaded, compiled);
	// "" when the file could not be read.
	SHA256 string
	Status Status
	// Entry is the approval of these bytes (approved plugins only).
	Entry *manifest.Entry
	// Err says why the plugin is invalid, or why a pending plugin is not
	// loaded (wrapping ErrNotApproved, or the quarantine load's error).
	Err error
	// Tools are the names under which the plugin's tools are exposed, in
	// describe order; a name in conflict is left out.
	Tools []string
	// Shadowed are the names of a quarantined plugin's tools withheld
	// because an approved plugin offers the same name.
	Shadowed []string
	// Skipped are the names of its tools its approval's skip_tools
	// withhold.
	Skipped []string
	// Loaded is the running module, nil when not loaded. The Dir owns it:
	// do not Close it.
	Loaded *host.Loaded
}

// Conflict is a tool name offered by more than one plugin. Neither tool is
// exposed until one plugin is removed or revoked, or the Dir namespaces
// tool names.
type Conflict struct {
	Tool  string   `json:"tool"`
	Files []string `json:"files"`
}

func (c Conflict) Error() string {
	return fmt.Sprintf("host: tool %q is offered by %s: none of them is exposed (remove or revoke all but one, or namespace plugin tools)",
		c.Tool, strings.Join(c.Files, " and "))
}

// Snapshot is the state of a plugins directory after one load. It is
// immutable; [Dir.Snapshot] returns the latest.
type Snapshot struct {
	// Dir and Manifest are the paths loaded.
	Dir, Manifest string
	// Plugins has one entry per .wasm file, by file name.
	Plugins []Plugin
	// Conflicts are the tool names withheld because several plugins offer
	// them.
	Conflicts []Conflict
	// Untrusted, when not nil, is why the manifest's approvals did not
	// count (an *manifest.UntrustedError): Options.Trust does not trust
	// its content. Ignored is how many approvals that left out.
	Untrusted error
	Ignored   int

	tools  []tool.Tool
	byName map[string]tool.Tool
	// held is an untrusted manifest's approvals, which do not count: only
	// to say why a plugin they approve is pending.
	held *manifest.Manifest
}

// Tools returns the exposed tools: those of approved (and quarantined)
// plugins, by file name then describe order.
func (s *Snapshot) Tools() []tool.Tool { return slices.Clone(s.tools) }

// Tool returns the exposed tool named name.
func (s *Snapshot) Tool(name string) (tool.Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Plugin returns the plugin whose approval name, file name, or file name
// without ".wasm" is name. An approval name wins over a file name, and an
// approval found in the file it records wins over one copied elsewhere:
// with an older approval of a name still in the manifest, its bytes copied
// in as aaa.wasm took the name over (found by attacking our own sandbox).
func (s *Snapshot) Plugin(name string) (Plugin, bool) {
	for _, match := range []func(Plugin) bool{
		func(p Plugin) bool { return p.Entry != nil && p.Entry.Name == name && p.Entry.File == p.File },
		func(p Plugin) bool { return p.Entry != nil && p.Entry.Name == name },
		func(p Plugin) bool { return p.File == name || strings.TrimSuffix(p.File, ".wasm") == name },
	} {
		for _, p := range s.Plugins {
			if match(p) {
				return p, true
			}
		}
	}
	return Plugin{}, false
}

// Err returns the conflicts as one error, or nil.
func (s *Snapshot) Err() error {
	errs := make([]error, len(s.Conflicts))
	for i, c := range s.Conflicts {
		errs[i] = c
	}
	return errors.Join(errs...)
}

// Dir is a plugins directory loaded into a [Host]: every .wasm file whose
// exact bytes the manifest approves runs with its approved grants and
// limits; the others are pending (or quarantined) or invalid, and never
// stop the rest from loading.
//
// [Dir.Tools] is always the current tool set; [Dir.Reload] rescans, and
// [Dir.Watch] rescans whenever a file or the manifest changes. A module's
// bytes are read once, hashed, and those same bytes are compiled, so a file
// swapped after approval never runs: at the next scan it drops to pending.
// A Dir is safe for concurrent use.
type Dir struct {
	h    *host.Host
	opts Options

	reloadMu sync.Mutex // serialises reloads
	snap     atomic.Pointer[Snapshot]
	// modules are the loaded modules of the current snapshot by load key,
	// shared by plugins with the same bytes, grants and limits.
	modules map[string]*host.Loaded
	// sums remembers, by file, the sha256 of the bytes last read and the
	// file's identity then (see fileKey), so a reload reads only files
	// that changed.
	sums   map[string]fileSum
	closed bool
	// quarantineLeft counts down, during a reload, the modules quarantine
	// may still load (Options.MaxQuarantined).
	quarantineLeft int
	// loading is the snapshot a reload is building.
	loading *Snapshot

	pubMu sync.Mutex
	pubs  []*tool.Publication

	// listChanged is signalled when a loaded stateful module says its
	// tools changed (notify_tool_list_changed): Watch reloads.
	listChanged chan struct{}
}

// Open loads the plugins directory. The error is for what prevents any
// decision: a manifest that does not load (corrupt, another version) or a
// directory that cannot be listed. Problems with single modules are in
// the snapshot's plugins.
func Open(ctx context.Context, h *host.Host, opts Options) (*Dir, error) {
	d := &Dir{h: h, opts: opts.withDefaults(), modules: map[string]*host.Loaded{}, sums: map[string]fileSum{}, listChanged: make(chan struct{}, 1)}
	d.snap.Store(&Snapshot{Dir: d.opts.Dir, Manifest: d.opts.Manifest, byName: map[string]tool.Tool{}})
	if _, err := d.Reload(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// trusted returns the approvals that count: m when Options.Trust is nil
// or trusts m's exact content (or m approves nothing), else none, with
// why in s. An error is for a trust store that cannot be read or lies
// where a checkout could have written it: nothing can be decided.
func (d *Dir) trusted(m *manifest.Manifest, s *Snapshot) (*manifest.Manifest, error) {
	if d.opts.Trust == nil || m.Len() == 0 {
		return m, nil
	}
	err := d.opts.Trust.Check(d.opts.Manifest, m.ContentSHA256())
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, manifest.ErrUntrusted) {
		return nil, err
	}
	s.Untrusted, s.Ignored, s.held = err, m.Len(), m
	return &manifest.Manifest{}, nil
}

// signalListChanged tells Watch that a module's tools changed.
func (d *Dir) signalListChanged() {
	select {
	case d.listChanged <- struct{}{}:
	default: // a reload is already due
	}
}

// Snapshot returns the current state.
func (d *Dir) Snapshot() *Snapshot { return d.snap.Load() }

// Tools returns the current exposed tools.
func (d *Dir) Tools() []tool.Tool { return d.snap.Load().Tools() }

// Options returns the options in effect, defaults applied.
func (d *Dir) Options() Options { return d.opts }

// Change describes what one reload changed.
type Change struct {
	// Snapshot is the state after the reload.
	Snapshot *Snapshot
	// Added, Removed and Replaced are exposed tool names: new, gone, and
	// now served by other bytes, grants or limits.
	Added, Removed, Replaced []string
	// Plugins are the files whose status or bytes changed.
	Plugins []PluginChange
	// Err reports tools a published registry refused (a name already
	// taken, for example by a host tool); nil when none.
	Err error
}

// PluginChange is one file whose status or bytes changed.
type PluginChange struct {
	File     string
	From, To Status // From is "" for a new file, To is "" for a removed one
	SHA256   string // the current sum, "" for a removed file
}

// Empty reports whether nothing changed.
func (c Change) Empty() bool {
	return len(c.Added)+len(c.Removed)+len(c.Replaced)+len(c.Plugins) == 0 && c.Err == nil
}

// Reload rescans the directory and the manifest now and swaps in the new
// tool set. When the manifest does not load, or ctx ends during the
// reload, the error says why and the current tool set stays. Modules that
// are no longer used are closed after the swap (calls in flight finish
// first). OnChange runs before Reload returns and must not call Reload.
func (d *Dir) Reload(ctx context.Context) (Change, error) {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if d.closed {
		return Change{}, host.ErrClosed
	}
	old := d.snap.Load()
	m, err := (&manifest.Store{Path: d.opts.Manifest}).Load()
	if err != nil {
		return Change{}, err
	}
	next := &Snapshot{Dir: d.opts.Dir, Manifest: d.opts.Manifest, byName: map[string]tool.Tool{}}
	if m, err = d.trusted(m, next); err != nil {
		return Change{}, err
	}
	files, err := d.listModules()
	if err != nil {
		return Change{}, err
	}
	modules := map[string]*host.Loaded{}
	sums := d.sums
	d.sums = map[string]fileSum{}
	d.quarantineLeft = d.opts.MaxQuarantined
	d.loading = next
	defer func() { d.loading = nil }()
	for _, f := range files {
		next.Plugins = append(next.Plugins, d.loadPlugin(ctx, m, f, modules, sums))
	}
	if err := ctx.Err(); err != nil {
		// Loads cut short by ctx would read as invalid modules: keep the
		// current state and drop what this reload loaded.
		var fresh []*host.Loaded
		for key, l := range modules {
			if d.modules[key] != l {
				fresh = append(fresh, l)
			}
		}
		_ = d.unload(context.WithoutCancel(ctx), fresh)
		return Change{}, err
	}
	d.expose(old, next)

	// Modules no plugin uses any more are closed after the swap: those of
	// files gone or changed, and those expose found invalid.
	used := map[*host.Loaded]bool{}
	for _, p := range next.Plugins {
		used[p.Loaded] = true
	}
	unused := make([]*host.Loaded, 0)
	for key, l := range modules {
		if !used[l] {
			delete(modules, key)
			if d.modules[key] != l {
				unused = append(unused, l) // loaded by this reload only
			}
		}
	}
	for key, l := range d.modules {
		if modules[key] != l {
			unused = append(unused, l)
		}
	}
	d.modules = modules
	d.snap.Store(next)
	ch := diff(old, next)
	ch.Err = d.syncPublications(next)
	if !ch.Empty() && d.opts.OnChange != nil {
		d.opts.OnChange(ch)
	}
	d.unload(ctx, unused)
	return ch, nil
}

// Close unloads every module. Tools handed out before report that they are
// no longer available.
func (d *Dir) Close(ctx context.Context) error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	d.closed = true
	var all []*host.Loaded
	for _, l := range d.modules {
		all = append(all, l)
	}
	d.modules = map[string]*host.Loaded{}
	return d.unload(ctx, all)
}

// unload closes modules; their tools then answer that they are no longer
// available (see dirTool).
func (d *Dir) unload(ctx context.Context, ls []*host.Loaded) error {
	var errs []error
	for _, l := range ls {
		errs = append(errs, l.Close(ctx))
	}
	return errors.Join(errs...)
}

// listModules returns the .wasm files of the directory by name; names
// starting with '.' (editor and temporary files) are skipped.
func (d *Dir) listModules() ([]string, error) {
	ents, err := os.ReadDir(d.opts.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("host: plugins directory: %w", err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".wasm") || strings.HasPrefix(n, ".") {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// wasmHeader is the magic number and version every WebAssembly binary
// starts with.
var wasmHeader = []byte("\x00asm\x01\x00\x00\x00")

// loadPlugin decides one file's status, loading it when approved (or
// quarantined). modules collects the loaded modules by load key; a module
// already loaded with the same key (by this or the previous snapshot) is
// reused rather than compiled and described again.
func (d *Dir) loadPlugin(ctx context.Context, m *manifest.Manifest, file string, modules map[string]*host.Loaded, sums map[string]fileSum) Plugin {
	p := Plugin{File: file, Path: filepath.Join(d.opts.Dir, file), Name: strings.TrimSuffix(file, ".wasm")}
	invalid := func(err error) Plugin {
		p.Status, p.Err = StatusInvalid, err
		return p
	}
	// A file whose identity is what it was at the last read has the bytes
	// it had then: its sum is reused, and the bytes are read again only if
	// its module must be loaded (see below). A write changes the file's
	// ctime, which only the kernel sets.
	var b []byte
	fkey, keyed := statKey(p.Path)
	if prev, ok := sums[file]; keyed && ok && prev.key == fkey {
		p.SHA256 = prev.sum
	} else {
		var err error
		if b, err = readModuleFile(p.Path, d.opts.MaxModuleBytes); err != nil {
			return invalid(err)
		}
		p.SHA256 = manifest.Sum(b)
	}
	// A file changed less than racyWindow before it was read may change
	// again within the same clock tick without its ctime moving (the
	// kernel's file times are coarse): its sum is not remembered, as git
	// treats an index entry racily clean.
	if keyed && time.Since(time.Unix(0, fkey.ctime)) > racyWindow {
		d.sums[file] = fileSum{key: fkey, sum: p.SHA256}
	}
	sidecarPath := filepath.Join(d.opts.Dir, manifest.SidecarFile(file))
	sidecar, err := readCapped(sidecarPath, host.MaxDescribe)
	if errors.Is(err, fs.ErrNotExist) {
		sidecar, err = nil, nil
	}
	if err != nil {
		return invalid(fmt.Errorf("describe sidecar: %w", err))
	}
	sidecarSum := ""
	if sidecar != nil {
		sidecarSum = manifest.Sum(sidecar)
	}

	mod := host.Module{Name: p.Name, Bytes: b, Sidecar: sidecar}
	entry, approved := m.Lookup(p.SHA256)
	if approved && entry.SidecarSHA256 != sidecarSum {
		approved = false
		p.Err = sidecarMismatch(entry.SidecarSHA256, sidecarSum, manifest.SidecarFile(file))
	}
	switch {
	case approved:
		p.Status, p.Entry, p.Name = StatusApproved, &entry, entry.Name
		mod.Name, mod.Grants, mod.Limits = entry.Name, entry.Grants, entry.Limits
		if err := manifest.CheckProtected(entry.Grants, d.opts.Protected()); err != nil {
			return invalid(err)
		}
	case d.opts.Quarantine && d.quarantineLeft <= 0:
		p.Status = StatusPending
		p.Err = fmt.Errorf("%w: no approval for sha256 %s, and quarantine already holds %d modules (Options.MaxQuarantined), each in a sandbox process of its own",
			ErrNotApproved, manifest.Short(p.SHA256), d.opts.MaxQuarantined)
		return p
	case d.opts.Quarantine:
		// Nobody approved it (in a manifest this user trusts): it runs in
		// a sandbox process (unless the host's Isolation says otherwise),
		// with no grants at all.
		d.quarantineLeft--
		p.Status = StatusQuarantined
		mod.Isolated = true
	default:
		p.Status = StatusPending
		if p.Err == nil {
			p.Err = d.notApproved(p.SHA256)
		}
		return p
	}

	key := loadKey(p.SHA256, sidecarSum, mod)
	l := modules[key]
	if l == nil {
		l = d.modules[key]
	}
	if l == nil && mod.Bytes == nil {
		// The sum came from the last read: read the bytes to load them,
		// and start over should they not be those bytes any more.
		if mod.Bytes, err = readModuleFile(p.Path, d.opts.MaxModuleBytes); err != nil {
			return invalid(err)
		}
		if manifest.Sum(mod.Bytes) != p.SHA256 {
			delete(sums, file)
			delete(d.sums, file)
			return d.loadPlugin(ctx, m, file, modules, sums)
		}
	}
	if l == nil {
		l, err = d.h.Load(ctx, mod)
		if err != nil {
			// No grant would fix it: a module loads with imports it was
			// not granted (quarantine's none included), and each of
			// their calls is refused.
			return invalid(err)
		}
		l.OnListChanged(d.signalListChanged)
	}
	modules[key] = l
	p.Loaded = l
	if p.Status == StatusQuarantined {
		p.Err = fmt.Errorf("%w: loaded in quarantine with no grants (sha256 %s)", ErrNotApproved, manifest.Short(p.SHA256))
	}
	return p
}

// notApproved says why a module whose bytes hash to sum is pending: no
// approval, or one in a manifest this user has not trusted.
func (d *Dir) notApproved(sum string) error {
	if held := d.loading.held; held != nil {
		if _, ok := held.Lookup(sum); ok {
			return fmt.Errorf("%w: approved in %s, which does not count: %w", ErrNotApproved, d.opts.Manifest, d.loading.Untrusted)
		}
	}
	return fmt.Errorf("%w: no approval for sha256 %s", ErrNotApproved, manifest.Short(sum))
}

func sidecarMismatch(want, got, file string) error {
	switch {
	case want == "":
		return fmt.Errorf("%w: a describe sidecar %s appeared after approval", ErrNotApproved, file)
	case got == "":
		return fmt.Errorf("%w: its describe sidecar %s, approved with it, is gone", ErrNotApproved, file)
	}
	return fmt.Errorf("%w: its describe sidecar %s changed since approval", ErrNotApproved, file)
}

// loadKey identifies a loaded module: same bytes, sidecar, grants and
// limits give the same running module.
func loadKey(sum, sidecarSum string, m host.Module) string {
	return fmt.Sprintf("%s|%s|%s|%s|%+v", sum, sidecarSum, m.Name, strings.Join(manifest.GrantStrings(m.Grants), ","), m.Limits)
}

// readCapped reads a whole regular file, refusing one larger than max
// without reading it, and a FIFO, device or socket without opening it for
// a read that could block (see safefile).
func readCapped(path string, max int64) ([]byte, error) {
	return safefile.Read(path, max)
}

// readModuleFile is readCapped for a module: a file that does not start
// with wasmHeader is malformed after 8 bytes, not read and hashed in full
// (sparse 255 MiB files named *.wasm made every reload of a directory read
// and hash them: 22 s and 1.6 GB for eight; found by attacking our own
// sandbox).
func readModuleFile(path string, max int64) ([]byte, error) {
	moduleReads.Add(1)
	b, err := safefile.ReadPrefixed(path, max, wasmHeader)
	if errors.Is(err, safefile.ErrPrefix) {
		return nil, fmt.Errorf("%w: the file does not start with the WebAssembly header", host.ErrMalformed)
	}
	return b, err
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// namespaced returns FILE__TOOL for the Namespace option.
func namespaced(file, name string) string {
	return unsafeNameChars.ReplaceAllString(strings.TrimSuffix(file, ".wasm"), "_") + "__" + name
}

// expose builds the snapshot's tool set from its loaded plugins, withholding
// every name offered more than once. A tool unchanged since old keeps its
// value, so registries holding it need no update.
func (d *Dir) expose(old, s *Snapshot) {
	type offer struct {
		plugin int
		t      tool.Tool
	}
	offers := map[string][]offer{}
	var order []string
	for i := range s.Plugins {
		p := &s.Plugins[i]
		if p.Loaded == nil {
			continue
		}
		for _, t := range p.Loaded.Tools() {
			name := t.Spec().Name
			if p.Entry != nil && p.Entry.Skips(name) {
				p.Skipped = append(p.Skipped, name)
				continue
			}
			if d.opts.Namespace {
				name = namespaced(p.File, name)
			}
			if !tool.ValidName(name) {
				p.Status, p.Err, p.Loaded = StatusInvalid, fmt.Errorf("host: namespaced tool name %q is not a valid tool name (at most 64 letters, digits, '_' or '-'): rename the file", name), nil
				break
			}
			if _, seen := offers[name]; !seen {
				order = append(order, name)
			}
			offers[name] = append(offers[name], offer{i, t})
		}
	}
	for _, name := range order {
		offs := slices.DeleteFunc(offers[name], func(o offer) bool { return s.Plugins[o.plugin].Loaded == nil })
		// An approved tool always wins over quarantined ones: a drop-in
		// nobody approved cannot take an approved tool out of service by
		// offering its name.
		if slices.ContainsFunc(offs, func(o offer) bool { return s.Plugins[o.plugin].Status == StatusApproved }) {
			offs = slices.DeleteFunc(offs, func(o offer) bool {
				p := &s.Plugins[o.plugin]
				if p.Status != StatusQuarantined {
					return false
				}
				p.Shadowed = append(p.Shadowed, name)
				return true
			})
		}
		// Among approved offers, one found in the file its approval records
		// wins over approved bytes copied in under another file name (an
		// older version's, kept in the manifest): a copy cannot take the
		// tool out of service by making a conflict.
		if slices.ContainsFunc(offs, func(o offer) bool { return inRecordedFile(&s.Plugins[o.plugin]) }) {
			offs = slices.DeleteFunc(offs, func(o offer) bool {
				p := &s.Plugins[o.plugin]
				if p.Status != StatusApproved || inRecordedFile(p) {
					return false
				}
				p.Shadowed = append(p.Shadowed, name)
				return true
			})
		}
		// A tool already served keeps being served from its plugin: a
		// module whose lists change at run time (a stateful hyper-mcp
		// plugin) cannot take another plugin's tool out of service by
		// offering its name after both were loaded (found by attacking our
		// own sandbox). Only a name both offered from the start, or that
		// no longer has its server, is a conflict.
		if served := old.servedBy(name); served != "" && slices.ContainsFunc(offs, func(o offer) bool { return s.Plugins[o.plugin].File == served }) {
			offs = slices.DeleteFunc(offs, func(o offer) bool {
				p := &s.Plugins[o.plugin]
				if p.File == served {
					return false
				}
				p.Shadowed = append(p.Shadowed, name)
				return true
			})
		}
		switch len(offs) {
		case 0:
		case 1:
			p := &s.Plugins[offs[0].plugin]
			t, ok := old.byName[name]
			if !ok || underlying(t) != offs[0].t {
				t = wrapTool(offs[0].t, name, p.File)
			}
			s.tools = append(s.tools, t)
			s.byName[name] = t
			p.Tools = append(p.Tools, name)
		default:
			c := Conflict{Tool: name}
			for _, o := range offs {
				c.Files = append(c.Files, s.Plugins[o.plugin].File)
			}
			s.Conflicts = append(s.Conflicts, c)
		}
	}
}

// servedBy returns the file of the plugin that served the exposed tool
// name in s, "" when s did not serve it.
func (s *Snapshot) servedBy(name string) string {
	if _, ok := s.byName[name]; !ok {
		return ""
	}
	for _, p := range s.Plugins {
		if slices.Contains(p.Tools, name) {
			return p.File
		}
	}
	return ""
}

// inRecordedFile reports whether p is approved and lies in the file its
// approval records.
func inRecordedFile(p *Plugin) bool {
	return p.Status == StatusApproved && p.Entry != nil && p.Entry.File == p.File
}

// diff compares two snapshots.
func diff(old, next *Snapshot) Change {
	ch := Change{Snapshot: next}
	for _, t := range next.tools {
		name := t.Spec().Name
		prev, ok := old.byName[name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, name)
		case underlying(prev) != underlying(t):
			ch.Replaced = append(ch.Replaced, name)
		}
	}
	for _, t := range old.tools {
		if _, ok := next.byName[t.Spec().Name]; !ok {
			ch.Removed = append(ch.Removed, t.Spec().Name)
		}
	}
	before := map[string]Plugin{}
	for _, p := range old.Plugins {
		before[p.File] = p
	}
	for _, p := range next.Plugins {
		b, ok := before[p.File]
		delete(before, p.File)
		if !ok || b.Status != p.Status || b.SHA256 != p.SHA256 {
			ch.Plugins = append(ch.Plugins, PluginChange{File: p.File, From: b.Status, To: p.Status, SHA256: p.SHA256})
		}
	}
	for _, p := range old.Plugins {
		if _, gone := before[p.File]; gone {
			ch.Plugins = append(ch.Plugins, PluginChange{File: p.File, From: p.Status})
		}
	}
	return ch
}

// racyWindow is how long a file must have been left alone before its sum
// is remembered across reloads (a variable for tests).
var racyWindow = 2 * time.Second

// moduleReads counts the module files read, for tests.
var moduleReads atomic.Int64

// fileSum is a file's sum at its last read, with its key then.
type fileSum struct {
	key fileKey
	sum string
}
