package httpx

import (
	"fmt"
	"net/url"
	"strings"
)

// BaseURL returns a provider's base URL: raw without trailing slashes, or
// def when raw is empty. It fails, naming the provider and the option, when
// the result is not an absolute http or https URL, so a typo is reported by
// the constructor instead of by every call.
func BaseURL(provider, raw, def string) (string, error) {
	base := strings.TrimRight(raw, "/")
	if base == "" {
		base = def
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: BaseURL %q is not an http(s) URL", provider, raw)
	}
	return base, nil
}
