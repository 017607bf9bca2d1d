package oci

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// DefaultMaxModule bounds a module Pull accepts when Client.MaxModule is 0
// (the plugins directory's own bound).
const DefaultMaxModule = 64 << 20

// maxMetadata bounds a manifest, an index or a signature payload.
const maxMetadata = 4 << 20

// Errors a caller can match with errors.Is.
var (
	// ErrNotFound: the registry has no such tag or digest.
	ErrNotFound = errors.New("oci: not found")
	// ErrTooLarge: a layer or manifest is larger than the bound.
	ErrTooLarge = errors.New("oci: too large")
	// ErrNoModule: the artifact holds no WebAssembly module.
	ErrNoModule = errors.New("oci: no WebAssembly module in the artifact")
	// ErrDigest: the registry served bytes whose digest is not the one
	// asked for.
	ErrDigest = errors.New("oci: digest mismatch")
	// ErrLogin: the registry refused the request without, or with
	// these, credentials.
	ErrLogin = errors.New("oci: the registry wants a login")
)

// Client talks to OCI registries. The zero value uses HTTPS, the Docker
// configuration file's credentials and credential helpers, and
// DefaultMaxModule.
type Client struct {
	// PlainHTTP talks HTTP instead of HTTPS (a registry without TLS, as
	// oras --plain-http).
	PlainHTTP bool
	// MaxModule bounds a module's layer in bytes; 0 means
	// DefaultMaxModule.
	MaxModule int64
	// HTTPClient is the transport; nil means a retrying client.
	HTTPClient *http.Client
	// Credentials returns the credential for a registry host; nil reads
	// the Docker configuration file ($DOCKER_CONFIG/config.json, else
	// ~/.docker/config.json) and its credential helpers.
	Credentials auth.CredentialFunc
}

func (c *Client) maxModule() int64 {
	if c.MaxModule > 0 {
		return c.MaxModule
	}
	return DefaultMaxModule
}

// repository returns the repository of ref, with the client's transport
// and credentials.
func (c *Client) repository(ref registry.Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, fmt.Errorf("oci: %w", err)
	}
	repo.PlainHTTP = c.PlainHTTP
	repo.MaxMetadataBytes = maxMetadata
	// Referrers are not used; pushing must not try to maintain them.
	repo.SkipReferrersGC = true
	cred := c.Credentials
	if cred == nil {
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("oci: reading the Docker credentials: %w (fix or move the Docker config file)", err)
		}
		cred = credentials.Credential(store)
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = retry.DefaultClient
	}
	repo.Client = &auth.Client{Client: hc, Credential: cred, Cache: auth.NewCache()}
	return repo, nil
}

// ParseReference parses REGISTRY/REPOSITORY[:TAG][@DIGEST], refusing one
// without a registry host (there is no default registry here).
func ParseReference(s string) (registry.Reference, error) {
	s = strings.TrimPrefix(s, "oci://")
	ref, err := registry.ParseReference(s)
	if err != nil {
		return registry.Reference{}, fmt.Errorf("oci: %q is not a reference: want REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST (%v)", s, err)
	}
	if ref.Reference == "" {
		return registry.Reference{}, fmt.Errorf("oci: %q names no tag or digest: add :TAG or @sha256:DIGEST", s)
	}
	return ref, nil
}

// registryError turns a failed request into an error that says what to do.
func registryError(what string, ref registry.Reference, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("oci: %s %s: %w", what, ref, err)
	case isNotFound(err):
		return fmt.Errorf("%w: %s %s: the registry has no such tag or digest (check the name with `oras repo tags`)", ErrNotFound, what, ref)
	case errors.Is(err, auth.ErrBasicCredentialNotFound) || httpStatus(err) == http.StatusUnauthorized || httpStatus(err) == http.StatusForbidden:
		return fmt.Errorf("%w: %s %s: %v (log in with `docker login %s` or `oras login %s`: credentials come from the Docker config file)",
			ErrLogin, what, ref, err, ref.Registry, ref.Registry)
	}
	return fmt.Errorf("oci: %s %s: %w (is the registry up, and does it speak HTTPS? pass --plain-http for one without TLS)", what, ref, err)
}

// httpStatus returns the status of a registry's error response, 0 for
// another error.
func httpStatus(err error) int {
	var er *errcode.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode
	}
	return 0
}
