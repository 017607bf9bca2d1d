// Package fscap is the fs.read and fs.write capabilities: the directories
// of a module's fs grants, mounted into its WASI file system ([Config]),
// each backed by an os.Root so that no path, `..` or link the guest
// makes resolves outside the granted directory.
//
// Every operation checks the call's deadline; the files an instance holds
// open count against Limits.OpenFiles and the bytes a call writes (a file,
// directory or link made counts 4 KiB, a write past a file's end the hole
// it leaves) against Limits.FSWrite. Only regular files and directories
// open, never blocking (a FIFO would hold the call past its deadline);
// guest paths are at most 4 096 bytes; links the guest makes, renames and
// hard links are refused whenever the result could resolve outside the
// mount. host/ABI.md §3 is the guest's view.
//
//	cfg := fscap.Config([]fscap.Mount{{Root: root, Path: "/data", ReadOnly: true}}, call)
//	moduleConfig = moduleConfig.WithFSConfig(cfg)
package fscap
