package oci

import (
	"context"
	"encoding/base64"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/sirupsen/logrus"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// testRegistry is the CNCF distribution registry, served on loopback with
// its blobs in a temporary directory the test can reach into.
type testRegistry struct {
	// Host is HOST:PORT; Root the storage directory.
	Host, Root string
	srv        *httptest.Server
}

func startRegistry(t testing.TB) *testRegistry {
	t.Helper()
	logrus.SetOutput(io.Discard)
	root := t.TempDir()
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{"filesystem": configuration.Parameters{"rootdirectory": root}},
	}
	cfg.Log.Level = "error"
	cfg.HTTP.Secret = "test"
	app := handlers.NewApp(context.Background(), cfg)
	srv := httptest.NewServer(app)
	t.Cleanup(srv.Close)
	return &testRegistry{Host: strings.TrimPrefix(srv.URL, "http://"), Root: root, srv: srv}
}

// blobPath is where the registry keeps the blob of digest d.
func (r *testRegistry) blobPath(d string) string {
	hex := strings.TrimPrefix(d, "sha256:")
	return filepath.Join(r.Root, "docker/registry/v2/blobs/sha256", hex[:2], hex, "data")
}

// noCredentials keeps the tests away from the user's Docker config.
func testClient() *Client {
	return &Client{PlainHTTP: true, Credentials: func(context.Context, string) (auth.Credential, error) {
		return auth.EmptyCredential, nil
	}}
}

func readDir(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
