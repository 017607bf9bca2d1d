// Package registrytest starts the CNCF distribution registry on loopback
// for tests: a real OCI registry, not a fake, with its blobs in a
// temporary directory a test can reach into.
package registrytest

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd" // the login StartWithLogin configures
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // the storage driver the registry is configured with
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
)

// Registry is a running registry.
type Registry struct {
	// Host is HOST:PORT on loopback, plain HTTP.
	Host string
	// Root is the storage directory.
	Root string
	srv  *httptest.Server
}

// Start serves a fresh registry until the test ends.
func Start(t testing.TB) *Registry { return start(t, nil) }

// StartWithLogin serves a fresh registry that answers only requests
// carrying user and password (HTTP basic authentication, as docker login
// sets up).
func StartWithLogin(t testing.TB, user, password string) *Registry {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return start(t, configuration.Auth{"htpasswd": configuration.Parameters{"realm": "test", "path": htpasswd}})
}

func start(t testing.TB, auth configuration.Auth) *Registry {
	t.Helper()
	logrus.SetOutput(io.Discard)
	root := t.TempDir()
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{"filesystem": configuration.Parameters{"rootdirectory": root}},
		Auth:    auth,
	}
	cfg.Log.Level = "error"
	cfg.HTTP.Secret = "test"
	srv := httptest.NewServer(handlers.NewApp(context.Background(), cfg))
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://"), Root: root, srv: srv}
}

// Close stops the registry: the next request fails to connect.
func (r *Registry) Close() { r.srv.Close() }

// BlobPath is where the registry keeps the blob of digest d.
func (r *Registry) BlobPath(d string) string {
	hex := strings.TrimPrefix(d, "sha256:")
	return filepath.Join(r.Root, "docker/registry/v2/blobs/sha256", hex[:2], hex, "data")
}
