//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package workspace

// canSwap: two names are not exchanged at once here.
const canSwap = false

func exchangeAt(int, string, int, string) error { return errNoSwap }
