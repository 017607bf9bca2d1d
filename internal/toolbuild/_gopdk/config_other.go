//go:build !wasip1

package pdk

func configGet(string) (string, bool) { return "", false }
