// Command conformance is a sandboxed tool module (WASI command ABI, described
// by conformance.tool.json) offering the tools the MCP conformance suite's
// server scenarios call, so that the suite can test `autoagent mcp serve`
// with a real module behind it. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -o conformance.wasm .
package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
)

// png1x1 is a 1x1 red PNG.
const png1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

type content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

type result struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

func main() {
	var in struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "reading the call:", err)
		os.Exit(1)
	}
	var r result
	switch in.Params.Name {
	case "test_simple_text":
		r.Content = []content{{Type: "text", Text: "This is a simple text response for testing."}}
	case "test_image_content":
		r.Content = []content{{Type: "image", Data: png1x1, MIMEType: "image/png"}}
	case "test_audio_content":
		r.Content = []content{{Type: "audio", Data: base64.StdEncoding.EncodeToString(wav()), MIMEType: "audio/wav"}}
	case "test_error_handling":
		r.Content = []content{{Type: "text", Text: "This tool intentionally returns an error for testing"}}
		r.IsError = true
	case "json_schema_2020_12_tool":
		r.Content = []content{{Type: "text", Text: "ok"}}
	default:
		fmt.Fprintln(os.Stderr, "unknown tool", in.Params.Name)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		os.Exit(1)
	}
}

// wav is a 10 ms 8 kHz 8-bit mono silence in a RIFF/WAVE container.
func wav() []byte {
	samples := make([]byte, 80)
	for i := range samples {
		samples[i] = 128
	}
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(36+len(samples)))
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)   // fmt chunk size
	b = binary.LittleEndian.AppendUint16(b, 1)    // PCM
	b = binary.LittleEndian.AppendUint16(b, 1)    // mono
	b = binary.LittleEndian.AppendUint32(b, 8000) // sample rate
	b = binary.LittleEndian.AppendUint32(b, 8000) // byte rate
	b = binary.LittleEndian.AppendUint16(b, 1)    // block align
	b = binary.LittleEndian.AppendUint16(b, 8)    // bits per sample
	b = append(b, "data"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(samples)))
	return append(b, samples...)
}
