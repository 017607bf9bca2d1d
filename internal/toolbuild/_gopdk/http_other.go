//go:build !wasip1

package pdk

func fetch(Request) (*Response, error) { return nil, ErrNoHost }
