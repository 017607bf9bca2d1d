// Package plugindir serves the tools of a plugins directory: the .wasm
// modules an operator drops in, each loaded only once a person approved
// its exact bytes in the hash manifest (docs/ARCHITECTURE.md §5), with the
// grants and limits approved for them, and kept in step with the
// directory and the manifest as they change.
//
//	h, _ := host.New(ctx, host.Options{})
//	plugins, err := plugindir.Open(ctx, h, plugindir.Options{Dir: "plugins"})
//	if err != nil {
//		return err // the manifest is corrupt, or the directory unreadable
//	}
//	defer plugins.Close(ctx)
//	for _, p := range plugins.Snapshot().Plugins {
//		fmt.Println(p.File, p.Status, p.Err) // approved, pending (why), invalid (why)
//	}
//	plugins.Publish(registry) // approved tools join the host's own, never replacing one
//	for change, err := range plugins.Watch(ctx) { ... } // reloads as files and approvals change
//
// A module is approved (loaded), pending (no approval for these bytes:
// listed, not loaded, or loaded with no grants under Options.Quarantine,
// never taking an approved tool's name) or invalid (not a module, a bad
// describe document: listed with the reason, never fatal to the others).
// Files that are not regular files (FIFOs, devices) are skipped with a
// reason, and the bytes hashed are the bytes compiled. With
// Options.Trust the manifest's approvals count only while this user's
// trust store trusts its exact content: a checkout's manifest approves
// nothing until then (Snapshot.Untrusted says why).
package plugindir
