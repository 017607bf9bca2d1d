package httpx

import (
	"errors"
	"fmt"
	"os"
)

// ErrNoAPIKey is wrapped by the error of [APIKey] when no key was found.
var ErrNoAPIKey = errors.New("no API key")

// APIKey resolves a provider's key: key when set, otherwise the environment
// variable env, read now (providers call it per request, so a key rotated
// in the environment is picked up and a missing one fails the call, not the
// construction). The error wraps ErrNoAPIKey and names the variable so the
// user knows what to set.
func APIKey(provider, key, env string) (string, error) {
	if key != "" {
		return key, nil
	}
	if env == "" {
		return "", fmt.Errorf("%s: %w: set the APIKey option or name an environment variable", provider, ErrNoAPIKey)
	}
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%s: %w: set the environment variable %s (or the APIKey option)", provider, ErrNoAPIKey, env)
}
