package anthropic

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
)

// jsonInstruction is appended to the system prompt when the request asks
// for JSON: the Messages API has no response-format field.
const jsonInstruction = "Respond with a single valid JSON object only — no markdown fences, no prose before or after."

var ephemeral = &wireCacheControl{Type: "ephemeral"}

// buildRequest translates req into the Messages API body.
func (c *config) buildRequest(req *llm.Request, stream bool) (*wireRequest, error) {
	w := &wireRequest{
		Model:       req.Model,
		Temperature: req.Temperature,
		Stream:      stream,
	}
	if w.Model == "" {
		w.Model = c.model
	}
	if w.Model == "" {
		return nil, ErrNoModel
	}

	maxTokens, err := c.maxTokensFor(req)
	if err != nil {
		return nil, err
	}
	w.MaxTokens = maxTokens
	if c.thinkingBudget > 0 {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: c.thinkingBudget}
	}

	var system []string
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			if t := m.Text(); t != "" {
				system = append(system, t)
			}
		}
	}
	answer := answerTool(req)
	if rf := req.ResponseFormat; rf != nil && answer == "" {
		system = append(system, formatInstruction(rf))
	}
	if answer != "" && (len(req.Tools) > 0 || req.ToolChoice.Mode != "") {
		system = append(system, answerToolInstruction(answer))
	}
	if len(system) > 0 {
		text := strings.Join(system, "\n\n")
		w.System = []wireBlock{{Type: "text", Text: &text}}
	}

	w.Messages, err = buildMessages(req.Messages)
	if err != nil {
		return nil, err
	}

	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	w.ToolChoice, err = toolChoice(req.ToolChoice, len(req.Tools) > 0)
	if err != nil {
		return nil, err
	}
	if answer != "" {
		rf := req.ResponseFormat
		w.Tools = append(w.Tools, wireTool{Name: answer, Description: cmp.Or(rf.Description, "Give your final answer."), InputSchema: rf.Schema})
		if len(req.Tools) == 0 && req.ToolChoice.Mode == "" {
			w.ToolChoice = &wireToolChoice{Type: "tool", Name: answer}
		}
	}

	if c.promptCaching {
		markCache(w)
	}
	return w, nil
}

// maxTokensFor returns max_tokens for req: the request's, else the
// configured one; with thinking on, a default grows past the budget and an
// explicit value that does not exceed it is refused (the API would).
func (c *config) maxTokensFor(req *llm.Request) (int, error) {
	if req.MaxTokens < 0 {
		return 0, fmt.Errorf("%w: MaxTokens is negative (%d)", ErrInvalidRequest, req.MaxTokens)
	}
	if req.MaxTokens > 0 {
		if c.thinkingBudget > 0 && req.MaxTokens <= c.thinkingBudget {
			return 0, fmt.Errorf("%w: MaxTokens (%d) must exceed the thinking budget (%d)", ErrInvalidRequest, req.MaxTokens, c.thinkingBudget)
		}
		return req.MaxTokens, nil
	}
	if c.thinkingBudget > 0 && !c.maxTokensSet && c.maxTokens <= c.thinkingBudget {
		return c.thinkingBudget + DefaultMaxTokens, nil
	}
	return c.maxTokens, nil
}

func formatInstruction(rf *llm.ResponseFormat) string {
	if rf.Type == "json_schema" && len(rf.Schema) > 0 {
		return jsonInstruction + " The object must satisfy this JSON Schema: " + string(rf.Schema)
	}
	return jsonInstruction
}

func toolChoice(tc llm.ToolChoice, haveTools bool) (*wireToolChoice, error) {
	switch tc.Mode {
	case "", llm.ToolChoiceAuto:
		return nil, nil
	case llm.ToolChoiceNone:
		// "none" keeps the tools defined (a history holding tool_use
		// blocks requires them) while forbidding new calls.
		if !haveTools {
			return nil, nil
		}
		return &wireToolChoice{Type: "none"}, nil
	case llm.ToolChoiceRequired:
		return &wireToolChoice{Type: "any"}, nil
	case llm.ToolChoiceTool:
		if tc.Name == "" {
			return nil, fmt.Errorf("%w: tool choice %q needs a tool name", ErrInvalidRequest, tc.Mode)
		}
		return &wireToolChoice{Type: "tool", Name: tc.Name}, nil
	default:
		return nil, fmt.Errorf("%w: unknown tool choice mode %q", ErrInvalidRequest, tc.Mode)
	}
}

// buildMessages maps the conversation (system messages excluded) to
// Anthropic messages. Tool messages become user messages of tool_result
// blocks, and consecutive messages that map to the same role are merged,
// because the API wants user and assistant turns to alternate and all the
// results of one assistant turn in one user message.
func buildMessages(msgs []llm.Message) ([]wireMessage, error) {
	var out []wireMessage
	for i, m := range msgs {
		var role string
		switch m.Role {
		case llm.RoleSystem:
			continue
		case llm.RoleUser, llm.RoleTool:
			role = "user"
		case llm.RoleAssistant:
			role = "assistant"
		default:
			return nil, fmt.Errorf("%w: message %d has unknown role %q", ErrInvalidRequest, i, m.Role)
		}
		blocks, err := buildBlocks(i, m)
		if err != nil {
			return nil, err
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	return out, nil
}

func buildBlocks(i int, m llm.Message) ([]wireBlock, error) {
	var blocks []wireBlock
	for j, p := range m.Parts {
		switch p.Type {
		case llm.PartText:
			// The API refuses empty text blocks.
			if p.Text == "" {
				continue
			}
			blocks = append(blocks, wireBlock{Type: "text", Text: ptr(p.Text)})
		case llm.PartImage:
			if m.Role == llm.RoleAssistant {
				return nil, fmt.Errorf("%w: message %d part %d: assistant messages cannot hold images", ErrInvalidRequest, i, j)
			}
			src, err := imageSource(p.Image)
			if err != nil {
				return nil, fmt.Errorf("%w: message %d part %d: %v", ErrInvalidRequest, i, j, err)
			}
			blocks = append(blocks, wireBlock{Type: "image", Source: src})
		case llm.PartToolCall:
			if m.Role != llm.RoleAssistant || p.ToolCall == nil {
				return nil, fmt.Errorf("%w: message %d part %d: a tool call must be in an assistant message", ErrInvalidRequest, i, j)
			}
			blocks = append(blocks, wireBlock{
				Type:  "tool_use",
				ID:    p.ToolCall.ID,
				Name:  p.ToolCall.Name,
				Input: httpx.JSONObject(p.ToolCall.Arguments),
			})
		case llm.PartToolResult:
			r := p.ToolResult
			if r == nil {
				return nil, fmt.Errorf("%w: message %d part %d: tool result without payload", ErrInvalidRequest, i, j)
			}
			b := wireBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
			if r.Content != "" {
				b.Content = []wireBlock{{Type: "text", Text: ptr(r.Content)}}
			}
			blocks = append(blocks, b)
		case llm.PartReasoning:
			if m.Role != llm.RoleAssistant {
				continue
			}
			switch {
			case p.Redacted != "":
				blocks = append(blocks, wireBlock{Type: "redacted_thinking", Data: p.Redacted})
			case p.Signature != "":
				blocks = append(blocks, wireBlock{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr(p.Signature)})
			default:
				// Reasoning without a signature came from another
				// provider (or was edited); the API rejects unsigned
				// thinking blocks, so it stays out of the request.
			}
		default:
			return nil, fmt.Errorf("%w: message %d part %d has unknown type %q", ErrInvalidRequest, i, j, p.Type)
		}
	}
	return blocks, nil
}

// imageSource returns the source of an image block: inline bytes and data:
// URLs as base64, other URLs as a URL source the API fetches itself.
func imageSource(img *llm.Image) (*wireImageSource, error) {
	mime, data, inline, err := httpx.InlineImage(img)
	if err != nil {
		return nil, err
	}
	if inline {
		return &wireImageSource{Type: "base64", MediaType: mime, Data: data}, nil
	}
	if strings.HasPrefix(img.URL, "https://") || strings.HasPrefix(img.URL, "http://") {
		return &wireImageSource{Type: "url", URL: img.URL}, nil
	}
	return nil, fmt.Errorf("image URL %q has an unsupported scheme (want https, http or data)", httpx.Truncate(img.URL, 40))
}

// markCache places the prompt-cache breakpoints: after the tools, after the
// system prompt, and at the end of the conversation, so each turn reads the
// previous turn's prefix from the cache and writes its own. Three of the
// four breakpoints the API allows.
func markCache(w *wireRequest) {
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
	}
	if n := len(w.System); n > 0 {
		w.System[n-1].CacheControl = ephemeral
	}
	if n := len(w.Messages); n > 0 {
		blocks := w.Messages[n-1].Content
		for i := len(blocks) - 1; i >= 0; i-- {
			// Thinking blocks cannot carry cache_control.
			if t := blocks[i].Type; t != "thinking" && t != "redacted_thinking" {
				blocks[i].CacheControl = ephemeral
				break
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
