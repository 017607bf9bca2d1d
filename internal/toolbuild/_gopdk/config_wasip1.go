//go:build wasip1

package pdk

func configGet(key string) (string, bool) {
	k := writeBlock([]byte(key))
	off := extismConfigGet(k)
	extismFree(k) // config_get, unlike var_get, leaves the key to the caller
	if off == 0 {
		return "", false
	}
	return string(takeBlock(off)), true
}
