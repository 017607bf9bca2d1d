//go:build !wasip1

package pdk

func kvGet(string, string) ([]byte, bool, error) { return nil, false, ErrNoHost }
func kvSet(string, string, []byte) error         { return ErrNoHost }
func kvDelete(string, string) error              { return ErrNoHost }
func kvList(string, string) ([]byte, error)      { return nil, ErrNoHost }
