package httpx

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// InlineImage returns the media type and base64 payload of an image given
// inline: its bytes (the media type sniffed from them when MIMEType is
// empty) or a base64 data: URL. inline is false, with no error, for an
// image that has only another kind of URL, which each provider handles in
// its own way. The error says what is wrong: no image, neither bytes nor
// URL, a media type that is not image/*, a data: URL that is not valid
// base64.
func InlineImage(img *llm.Image) (mime, data string, inline bool, err error) {
	switch {
	case img == nil:
		return "", "", false, errors.New("image part without image")
	case len(img.Data) > 0:
		mime = img.MIMEType
		if mime == "" {
			mime = http.DetectContentType(img.Data)
		}
		if !strings.HasPrefix(mime, "image/") {
			return "", "", false, fmt.Errorf("image has no image MIME type (detected %q); set Image.MIMEType", mime)
		}
		return mime, base64.StdEncoding.EncodeToString(img.Data), true, nil
	case strings.HasPrefix(img.URL, "data:"):
		mime, data, err = parseDataURL(img.URL)
		return mime, data, err == nil, err
	case img.URL == "":
		return "", "", false, errors.New("image has neither data nor URL")
	}
	return "", "", false, nil
}

// parseDataURL splits a base64 data: URL into its media type and payload.
func parseDataURL(u string) (mime, data string, err error) {
	meta, payload, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return "", "", errors.New("image data: URL is not base64-encoded")
	}
	mime = strings.TrimSuffix(meta, ";base64")
	if !strings.HasPrefix(mime, "image/") {
		return "", "", fmt.Errorf("image data: URL has media type %q, want image/*", mime)
	}
	if _, err := base64.StdEncoding.DecodeString(payload); err != nil {
		return "", "", fmt.Errorf("image data: URL payload is not valid base64: %v", err)
	}
	return mime, payload, nil
}
