package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
)

// emptySchema is sent for a tool that declares no input schema: OpenAI
// requires "parameters" to be an object schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// encode builds the JSON body for req.
func (p *Provider) encode(req *llm.Request, stream bool) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	if model == "" {
		return nil, ErrNoModel
	}
	msgs, err := p.messages(req.Messages)
	if err != nil {
		return nil, err
	}
	w := chatRequest{Model: model, Messages: msgs, Temperature: req.Temperature}
	for _, t := range req.Tools {
		params := t.InputSchema
		if len(params) == 0 {
			params = emptySchema
		}
		w.Tools = append(w.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if len(w.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case "":
		case llm.ToolChoiceAuto, llm.ToolChoiceNone, llm.ToolChoiceRequired:
			w.ToolChoice = req.ToolChoice.Mode
		case llm.ToolChoiceTool:
			if req.ToolChoice.Name == "" {
				return nil, fmt.Errorf("%w: tool choice %q without a tool name", ErrInvalidRequest, llm.ToolChoiceTool)
			}
			w.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": req.ToolChoice.Name}}
		default:
			return nil, fmt.Errorf("%w: unknown tool choice mode %q", ErrInvalidRequest, req.ToolChoice.Mode)
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	field := p.cfg.MaxTokensField
	if field == "" {
		field = MaxTokens
		if usesMaxCompletionTokens(model) {
			field = MaxCompletionTokens
		}
	}
	if field == MaxCompletionTokens {
		w.MaxCompletionTokens = maxTokens
	} else {
		w.MaxTokens = maxTokens
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			w.ResponseFormat = map[string]string{"type": "json_object"}
		case "json_schema":
			name := rf.Name
			if name == "" {
				name = "response"
			}
			schema := map[string]any{"name": name, "schema": rf.Schema}
			if rf.Strict {
				schema["strict"] = true
			}
			if rf.Description != "" {
				schema["description"] = rf.Description
			}
			w.ResponseFormat = map[string]any{"type": "json_schema", "json_schema": schema}
		default:
			return nil, fmt.Errorf("%w: unknown response format type %q", ErrInvalidRequest, rf.Type)
		}
	}
	if stream {
		w.Stream = true
		if !p.cfg.NoStreamUsage {
			w.StreamOptions = &streamOptions{IncludeUsage: true}
		}
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return httpx.MergeJSON(body, p.cfg.ExtraBody)
}

// messages converts the history. A tool message with several results
// becomes several wire messages, one per tool_call_id, as the API wants.
func (p *Provider) messages(in []llm.Message) ([]chatMessage, error) {
	out := make([]chatMessage, 0, len(in))
	for i, m := range in {
		switch m.Role {
		case llm.RoleSystem:
			out = append(out, chatMessage{Role: "system", Content: m.Text()})
		case llm.RoleUser:
			content, err := userContent(m)
			if err != nil {
				return nil, fmt.Errorf("%w: message %d: %w", ErrInvalidRequest, i, err)
			}
			out = append(out, chatMessage{Role: "user", Content: content})
		case llm.RoleAssistant:
			cm := chatMessage{Role: "assistant"}
			if t := m.Text(); t != "" {
				cm.Content = t
			}
			if !p.cfg.OmitReasoning {
				cm.ReasoningContent = m.Reasoning()
			}
			for _, c := range m.ToolCalls() {
				args := string(c.Arguments)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: c.ID, Type: "function", Function: functionCall{Name: c.Name, Arguments: args}})
			}
			if cm.Content == nil && len(cm.ToolCalls) == 0 {
				cm.Content = "" // an empty answer still needs a content field
			}
			out = append(out, cm)
		case llm.RoleTool:
			for _, r := range m.ToolResults() {
				out = append(out, chatMessage{Role: "tool", ToolCallID: r.CallID, Content: r.Content})
			}
		default:
			return nil, fmt.Errorf("%w: message %d has unknown role %q", ErrInvalidRequest, i, m.Role)
		}
	}
	return out, nil
}

// userContent is a plain string for text-only messages (what every server
// accepts) and a list of parts when the message holds images.
func userContent(m llm.Message) (any, error) {
	if !m.HasImages() {
		return m.Text(), nil
	}
	parts := make([]contentPart, 0, len(m.Parts))
	for _, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			parts = append(parts, contentPart{Type: "text", Text: p.Text})
		case llm.PartImage:
			u, err := imageDataURL(p.Image)
			if err != nil {
				return nil, err
			}
			parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{URL: u}})
		}
	}
	return parts, nil
}

// imageDataURL returns the URL OpenAI expects: the image's own URL (https
// or data:), or its bytes as a base64 data URL.
func imageDataURL(img *llm.Image) (string, error) {
	if img == nil || (len(img.Data) == 0 && img.URL == "") {
		return "", fmt.Errorf("image part has neither data nor URL")
	}
	if len(img.Data) == 0 {
		return img.URL, nil
	}
	mime := img.MIMEType
	if mime == "" {
		mime = http.DetectContentType(img.Data)
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(img.Data), nil
}
