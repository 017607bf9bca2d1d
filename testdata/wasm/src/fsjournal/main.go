//go:build wasip1

// Command fsjournal is a WASI command that changes files as its input
// says, for the host's tests of the fs.workspace grant. It is called
// with {"params":{"arguments":{"dir":D,"ops":[OP...]}}}, each OP
// {"op":O,"path":P,"to":T,"text":X,"at":N} with P and T relative to D:
//
//	write     create or truncate P, write X
//	append    append X to P (made if absent)
//	writeat   open P read-write (neither made nor truncated), write X at N
//	open      open P read-write and close it, changing nothing
//	truncate  truncate P to N bytes
//	remove    remove P (a file or an empty directory)
//	rename    rename P to T
//	link      make T a hard link to P
//	mkdir     make the directory P
//	read      read P
//
// Each op is reported as "O P: done" ("O P: TEXT" for read) or
// "O P: ERROR", joined by "; ".
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

type op struct {
	Op   string `json:"op"`
	Path string `json:"path"`
	To   string `json:"to"`
	Text string `json:"text"`
	At   int64  `json:"at"`
}

func main() {
	var in struct {
		Params struct {
			Arguments struct {
				Dir string `json:"dir"`
				Ops []op   `json:"ops"`
			} `json:"arguments"`
		} `json:"params"`
	}
	b, _ := io.ReadAll(os.Stdin)
	_ = json.Unmarshal(b, &in)
	d := in.Params.Arguments.Dir
	at := func(name string) string { return d + "/" + name }
	var out []string
	for _, o := range in.Params.Arguments.Ops {
		text, err := do(o, at)
		res := "done"
		switch {
		case err != nil:
			res = strings.TrimPrefix(fmt.Sprint(unwrap(err)), "errno ")
		case o.Op == "read":
			res = text
		}
		out = append(out, o.Op+" "+o.Path+": "+res)
	}
	res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": strings.Join(out, "; ")}}})
	os.Stdout.Write(res)
}

func do(o op, at func(string) string) (string, error) {
	p := at(o.Path)
	switch o.Op {
	case "write":
		return "", os.WriteFile(p, []byte(o.Text), 0o644)
	case "append":
		return "", writeWith(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, func(f *os.File) error {
			_, err := f.WriteString(o.Text)
			return err
		})
	case "writeat":
		return "", writeWith(p, os.O_RDWR, func(f *os.File) error {
			_, err := f.WriteAt([]byte(o.Text), o.At)
			return err
		})
	case "open":
		return "", writeWith(p, os.O_RDWR, func(*os.File) error { return nil })
	case "truncate":
		return "", os.Truncate(p, o.At)
	case "remove":
		return "", os.Remove(p)
	case "rename":
		return "", os.Rename(p, at(o.To))
	case "link":
		return "", os.Link(p, at(o.To))
	case "mkdir":
		return "", os.Mkdir(p, 0o755)
	case "read":
		b, err := os.ReadFile(p)
		return string(b), err
	}
	return "", fmt.Errorf("unknown op %q", o.Op)
}

func writeWith(p string, flag int, fn func(*os.File) error) error {
	f, err := os.OpenFile(filepath.Clean(p), flag, 0o644)
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// unwrap returns the system error under a *PathError or *LinkError.
func unwrap(err error) error {
	for {
		switch e := err.(type) {
		case *os.PathError:
			err = e.Err
		case *os.LinkError:
			err = e.Err
		default:
			return err
		}
	}
}
