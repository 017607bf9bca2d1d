package oci

import (
	"context"
	"encoding/base64"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/autoagent-go/autoagent/internal/registrytest"
)

func startRegistry(t testing.TB) *registrytest.Registry { return registrytest.Start(t) }

// testClient talks plain HTTP and keeps away from the user's Docker config.
func testClient() *Client {
	return &Client{PlainHTTP: true, Credentials: func(context.Context, string) (auth.Credential, error) {
		return auth.EmptyCredential, nil
	}}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
