package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
)

// buildRequest translates req into a generateContent body and returns it
// with the model to call.
func (c *config) buildRequest(req *llm.Request) (*wireRequest, string, error) {
	model := req.Model
	if model == "" {
		model = c.model
	}
	model = strings.TrimPrefix(model, "models/")
	if model == "" {
		return nil, "", ErrNoModel
	}
	w := &wireRequest{}

	var system []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			if t := m.Text(); t != "" {
				system = append(system, t)
			}
		}
	}
	if len(system) > 0 {
		text := strings.Join(system, "\n\n")
		w.SystemInstruction = &wireContent{Parts: []wirePart{{Text: &text}}}
	}

	var err error
	w.Contents, err = buildContents(req.Messages)
	if err != nil {
		return nil, "", err
	}

	if len(req.Tools) > 0 {
		decls := make([]wireFunctionDecl, 0, len(req.Tools))
		for _, t := range req.Tools {
			params, err := sanitizeSchema(t.InputSchema)
			if err != nil {
				return nil, "", fmt.Errorf("%w: tool %q: %v", ErrInvalidRequest, t.Name, err)
			}
			decls = append(decls, wireFunctionDecl{Name: t.Name, Description: t.Description, Parameters: params})
		}
		w.Tools = []wireTool{{FunctionDeclarations: decls}}
	}
	w.ToolConfig, err = toolConfig(req.ToolChoice)
	if err != nil {
		return nil, "", err
	}

	gc := &wireGenConfig{Temperature: req.Temperature, ThinkingConfig: c.thinking}
	switch {
	case req.MaxTokens < 0:
		return nil, "", fmt.Errorf("%w: MaxTokens is negative (%d)", ErrInvalidRequest, req.MaxTokens)
	case req.MaxTokens > 0:
		gc.MaxOutputTokens = req.MaxTokens
	default:
		gc.MaxOutputTokens = c.maxTokens
	}
	if rf := req.ResponseFormat; rf != nil {
		gc.ResponseMIMEType = "application/json"
		if rf.Type == "json_schema" && len(rf.Schema) > 0 {
			if !json.Valid(rf.Schema) {
				return nil, "", fmt.Errorf("%w: response format schema is not JSON", ErrInvalidRequest)
			}
			gc.ResponseJSONSchema = rf.Schema
		}
	}
	if gc.Temperature != nil || gc.MaxOutputTokens > 0 || gc.ResponseMIMEType != "" || gc.ThinkingConfig != nil {
		w.GenerationConfig = gc
	}
	return w, model, nil
}

func toolConfig(tc llm.ToolChoice) (*wireToolConfig, error) {
	var fc wireFunctionCallingConfig
	switch tc.Mode {
	case "", llm.ToolChoiceAuto:
		return nil, nil
	case llm.ToolChoiceNone:
		fc.Mode = "NONE"
	case llm.ToolChoiceRequired:
		fc.Mode = "ANY"
	case llm.ToolChoiceTool:
		if tc.Name == "" {
			return nil, fmt.Errorf("%w: tool choice %q needs a tool name", ErrInvalidRequest, tc.Mode)
		}
		fc.Mode = "ANY"
		fc.AllowedFunctionNames = []string{tc.Name}
	default:
		return nil, fmt.Errorf("%w: unknown tool choice mode %q", ErrInvalidRequest, tc.Mode)
	}
	return &wireToolConfig{FunctionCallingConfig: fc}, nil
}

// buildContents maps the conversation (system messages excluded) to Gemini
// contents: assistant turns have role "model", tool results are
// functionResponse parts of a "user" turn, and consecutive turns of the same
// role are merged (all the results of one model turn travel together).
func buildContents(msgs []llm.Message) ([]wireContent, error) {
	// Gemini's functionResponse needs the function's name; a result that
	// lacks it gets it from the call it answers.
	callNames := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls() {
			callNames[c.ID] = c.Name
		}
	}
	var out []wireContent
	for i, m := range msgs {
		var role string
		switch m.Role {
		case llm.RoleSystem:
			continue
		case llm.RoleUser, llm.RoleTool:
			role = "user"
		case llm.RoleAssistant:
			role = "model"
		default:
			return nil, fmt.Errorf("%w: message %d has unknown role %q", ErrInvalidRequest, i, m.Role)
		}
		parts, err := buildParts(i, m, callNames)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			if role != "model" {
				continue
			}
			// An empty model turn still has to alternate with the user
			// turns around it, and a content needs at least one part.
			parts = []wirePart{{Text: new(string)}}
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			continue
		}
		out = append(out, wireContent{Role: role, Parts: parts})
	}
	return out, nil
}

func buildParts(i int, m llm.Message, callNames map[string]string) ([]wirePart, error) {
	var parts []wirePart
	for j, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			// An empty text part is kept only when it carries a
			// signature, which Gemini wants back.
			if p.Text == "" && p.Signature == "" {
				continue
			}
			parts = append(parts, wirePart{Text: ptr(p.Text), ThoughtSignature: p.Signature})
		case llm.PartReasoning:
			// Thought summaries are never needed back; a signed thought
			// part is returned as it came because its signature is.
			if m.Role == llm.RoleAssistant && p.Signature != "" {
				parts = append(parts, wirePart{Text: ptr(p.Text), Thought: true, ThoughtSignature: p.Signature})
			}
		case llm.PartImage:
			blob, err := inlineImage(p.Image)
			if err != nil {
				return nil, fmt.Errorf("%w: message %d part %d: %v", ErrInvalidRequest, i, j, err)
			}
			parts = append(parts, wirePart{InlineData: blob})
		case llm.PartToolCall:
			if m.Role != llm.RoleAssistant || p.ToolCall == nil {
				return nil, fmt.Errorf("%w: message %d part %d: a tool call must be in an assistant message", ErrInvalidRequest, i, j)
			}
			parts = append(parts, wirePart{
				FunctionCall: &wireFunctionCall{
					ID:   p.ToolCall.ID,
					Name: p.ToolCall.Name,
					Args: httpx.JSONObject(p.ToolCall.Arguments),
				},
				ThoughtSignature: p.Signature,
			})
		case llm.PartToolResult:
			r := p.ToolResult
			if r == nil {
				return nil, fmt.Errorf("%w: message %d part %d: tool result without payload", ErrInvalidRequest, i, j)
			}
			name := r.Name
			if name == "" {
				name = callNames[r.CallID]
			}
			if name == "" {
				return nil, fmt.Errorf("%w: message %d part %d: tool result for call %q has no tool name and answers no call in the history", ErrInvalidRequest, i, j, r.CallID)
			}
			key := "result"
			if r.IsError {
				key = "error"
			}
			parts = append(parts, wirePart{FunctionResponse: &wireFunctionResponse{
				ID:       r.CallID,
				Name:     name,
				Response: map[string]any{key: r.Content},
			}})
		default:
			return nil, fmt.Errorf("%w: message %d part %d has unknown type %q", ErrInvalidRequest, i, j, p.Type)
		}
	}
	return parts, nil
}

// inlineImage returns the inline data of an image part: its bytes, or the
// payload of a data: URL. Gemini's fileData only takes URIs of its own
// Files API, so a remote URL is refused with a clear error instead of a 400.
func inlineImage(img *llm.Image) (*wireBlob, error) {
	mime, data, inline, err := httpx.InlineImage(img)
	if err != nil {
		return nil, err
	}
	if !inline {
		return nil, fmt.Errorf("remote image URLs are not supported by Gemini's inline data; download the image and pass its bytes (Image.Data)")
	}
	return &wireBlob{MIMEType: mime, Data: data}, nil
}

func ptr[T any](v T) *T { return &v }
