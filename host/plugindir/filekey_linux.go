//go:build linux

package plugindir

import "syscall"

func statMtime(st *syscall.Stat_t) int64 { return st.Mtim.Nano() }
func statCtime(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
