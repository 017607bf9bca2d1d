package httpx

import (
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

func TestInlineImage(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, tt := range []struct {
		name       string
		img        *llm.Image
		mime, data string
		inline     bool
		err        string // substring of the error, "" for none
	}{
		{"bytes with type", &llm.Image{MIMEType: "image/jpeg", Data: []byte{1, 2, 3}}, "image/jpeg", "AQID", true, ""},
		{"bytes, type sniffed", &llm.Image{Data: png}, "image/png", "iVBORw0KGgoAAAANSUhEUg==", true, ""},
		{"data URL", &llm.Image{URL: "data:image/gif;base64,R0lG"}, "image/gif", "R0lG", true, ""},
		{"remote URL is the caller's", &llm.Image{URL: "https://example.com/a.png"}, "", "", false, ""},
		{"nil", nil, "", "", false, "without image"},
		{"empty", &llm.Image{}, "", "", false, "neither data nor URL"},
		{"bytes not an image", &llm.Image{Data: []byte("hello world")}, "", "", false, "no image MIME type"},
		{"declared type not an image", &llm.Image{MIMEType: "text/plain", Data: png}, "", "", false, "no image MIME type"},
		{"data URL not base64", &llm.Image{URL: "data:image/png,abc"}, "", "", false, "not base64-encoded"},
		{"data URL not an image", &llm.Image{URL: "data:text/plain;base64,aGk="}, "", "", false, "want image/*"},
		{"data URL bad payload", &llm.Image{URL: "data:image/png;base64,@@@"}, "", "", false, "not valid base64"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mime, data, inline, err := InlineImage(tt.img)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || mime != tt.mime || data != tt.data || inline != tt.inline {
				t.Errorf("got (%q, %q, %v, %v), want (%q, %q, %v, nil)", mime, data, inline, err, tt.mime, tt.data, tt.inline)
			}
		})
	}
}
