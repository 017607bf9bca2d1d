package rewrite

import (
	"errors"
	"strings"
)

// ErrBadBinary is what Scan returns for a section it cannot read.
var ErrBadBinary = errors.New("truncated or malformed section")

// Scan returns the initial page count of the module's memory (0
// when it has none) and the first table or global it imports ("" when
// none). It reads the binary itself because wazero exposes memory limits
// only for exported memories and no table or global imports at all, and a
// module must be refused before an instance tries to allocate more than
// its limit. b was validated, but may come from the disk cache.
func Scan(b []byte) (pages uint32, otherImport string, err error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return 0, "", errors.New("missing the \\0asm header")
	}
	r := reader{b: b, p: 8}
	for !r.done() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil {
			return 0, "", ErrBadBinary
		}
		switch id {
		case secImport:
			ir := reader{b: body}
			n := ir.u32()
			for i := uint32(0); i < n && ir.err == nil && otherImport == ""; i++ {
				mod, name := ir.name(), ir.name()
				switch ir.byte() {
				case 0: // function
					ir.u32()
				case 1: // table
					ir.byte()
					ir.limits()
					otherImport = mod + "." + name
				case 2: // memory
					ir.limits()
				case 3: // global
					ir.byte()
					ir.byte()
					otherImport = mod + "." + name
				default:
					return 0, "", ErrBadBinary
				}
			}
			if ir.err != nil {
				return 0, "", ErrBadBinary
			}
		case secMemory:
			mem := reader{b: body}
			if mem.u32() == 0 {
				continue
			}
			mem.byte() // limits flags
			pages = mem.u32()
			if mem.err != nil || pages > 65536 {
				return 0, "", ErrBadBinary
			}
		}
	}
	return pages, otherImport, nil
}

// SnapshotInfo reads what the rewrite recorded in b for snapshots: the
// names of the globals it exported for them (GlobalExportPrefix), and
// whether the module may be restored from a snapshot at all (the
// SnapshotSection; see snapshotSafe), and whether a used instance may be
// reset to one (see resetSafe). b was rewritten, but may come from the
// disk cache.
func SnapshotInfo(b []byte) (globals []string, safe, reset bool, err error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, false, false, errors.New("missing the \\0asm header")
	}
	r := reader{b: b, p: 8}
	for !r.done() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil {
			return nil, false, false, ErrBadBinary
		}
		switch id {
		case secCustom:
			cr := reader{b: body}
			if cr.name() == SnapshotSection && cr.err == nil {
				flags := cr.byte()
				safe = cr.err == nil && flags&SnapshotRestore != 0
				reset = safe && flags&SnapshotReset != 0
			}
		case secExport:
			er := reader{b: body}
			n := er.u32()
			for i := uint32(0); i < n && er.err == nil; i++ {
				name := er.name()
				kind := er.byte()
				er.u32()
				if kind == 0x03 && strings.HasPrefix(name, GlobalExportPrefix) {
					globals = append(globals, name)
				}
			}
			if er.err != nil {
				return nil, false, false, ErrBadBinary
			}
		}
	}
	return globals, safe, reset, nil
}
