package host

import "golang.org/x/sys/unix"

// mapNoReserve: Linux need not set swap aside for a reservation that is
// mostly never touched.
const mapNoReserve = unix.MAP_NORESERVE
