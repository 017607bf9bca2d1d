//go:build wasip1

package pdk

import "github.com/autoagent-go/autoagent/pdk/go/extism"

func configGet(key string) (string, bool) { return extism.Config(key) }
