// Command capabilities is a test module of the Go PDK: one tool per
// capability function, so pdk/conformance/capabilities_test.go can check
// each of them through the autoagent host.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

type logIn struct {
	Level   int    `json:"level" jsonschema:"0 trace to 4 error"`
	Message string `json:"message" jsonschema:"what to log"`
}

type keyIn struct {
	Key string `json:"key" jsonschema:"the key"`
}

type fetchIn struct {
	Method string            `json:"method" jsonschema:"HTTP method"`
	URL    string            `json:"url" jsonschema:"the URL"`
	Header map[string]string `json:"header,omitempty" jsonschema:"request headers"`
	Body   string            `json:"body,omitempty" jsonschema:"request body"`
}

type fetchOut struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
}

type kvIn struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace; empty for the only one"`
	Key       string `json:"key" jsonschema:"the key"`
	Value     string `json:"value" jsonschema:"the value to store"`
}

type kvOut struct {
	Before string   `json:"before"`
	Found  bool     `json:"found"`
	Keys   []string `json:"keys"`
	After  bool     `json:"after_delete"`
}

type pathIn struct {
	Path string `json:"path" jsonschema:"file path"`
}

func init() {
	pdk.Register(
		pdk.NewTool("log", "Logs a message at a level.", func(_ context.Context, in logIn) (string, error) {
			pdk.Log(pdk.Level(in.Level), in.Message)
			return "logged", nil
		}),
		pdk.NewTool("counter", "Counts its calls in an instance variable and reads it back.", func(_ context.Context, in keyIn) (string, error) {
			n := 0
			if v, ok := pdk.GetVar(in.Key); ok {
				n, _ = strconv.Atoi(string(v))
			}
			pdk.SetVar(in.Key, []byte(strconv.Itoa(n+1)))
			v, ok := pdk.GetVar(in.Key)
			if !ok {
				return "", fmt.Errorf("variable %s lost right after SetVar", in.Key)
			}
			pdk.SetVar(in.Key+".tmp", []byte("x"))
			pdk.SetVar(in.Key+".tmp", nil)
			if _, ok := pdk.GetVar(in.Key + ".tmp"); ok {
				return "", fmt.Errorf("SetVar(nil) did not delete")
			}
			return string(v), nil
		}),
		pdk.NewTool("config", "Returns a config value.", func(_ context.Context, in keyIn) (string, error) {
			v, ok := pdk.Config(in.Key)
			if !ok {
				return "", fmt.Errorf("config %s is not set", in.Key)
			}
			return v, nil
		}),
		pdk.NewTool("fetch", "Sends an HTTP request.", func(ctx context.Context, in fetchIn) (fetchOut, error) {
			req := pdk.Request{Method: in.Method, URL: in.URL, Header: in.Header}
			if in.Body != "" {
				req.Body = []byte(in.Body)
			}
			resp, err := pdk.Fetch(ctx, req)
			if err != nil {
				return fetchOut{}, err
			}
			return fetchOut{Status: resp.Status, Body: string(resp.Body)}, nil
		}),
		pdk.NewTool("kv", "Stores, lists, reads back and deletes a key.", func(_ context.Context, in kvIn) (kvOut, error) {
			s := pdk.KV(in.Namespace)
			var out kvOut
			before, _, err := s.Get(in.Key)
			if err != nil {
				return out, err
			}
			out.Before = string(before)
			if err := s.Set(in.Key, []byte(in.Value)); err != nil {
				return out, err
			}
			v, found, err := s.Get(in.Key)
			if err != nil || string(v) != in.Value {
				return out, fmt.Errorf("read back %q, %v", v, err)
			}
			out.Found = found
			if out.Keys, err = s.Keys(""); err != nil {
				return out, err
			}
			if err := s.Delete(in.Key); err != nil {
				return out, err
			}
			_, out.After, err = s.Get(in.Key)
			return out, err
		}),
		pdk.NewTool("env", "Returns an environment variable.", func(_ context.Context, in keyIn) (string, error) {
			return os.Getenv(in.Key), nil
		}),
		pdk.NewTool("read", "Reads a file.", func(_ context.Context, in pathIn) (string, error) {
			b, err := os.ReadFile(in.Path)
			return string(b), err
		}),
	)
	pdk.RequestCapabilities("kv:caps", "net:127.0.0.1")
}

func main() {}
