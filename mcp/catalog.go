package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is a prompt a [Server] offers besides its tools: its MCP
// definition and the functions that render and complete it. A hyper-mcp
// v2 plugin's prompts (host.Loaded.Prompts, GetPrompt, Complete) fit it.
type Prompt struct {
	// Definition is MCP's Prompt object: {"name", "description",
	// "arguments": [...]}.
	Definition json.RawMessage
	// Get renders the prompt with args: MCP's GetPromptResult as JSON.
	Get func(ctx context.Context, args map[string]string) (json.RawMessage, error)
	// Complete, when set, completes one of its arguments: params are
	// MCP's CompleteRequest params, the answer its CompleteResult as JSON.
	Complete func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
}

// Resource is a resource, or with Template a family of resources by URI
// template, that a [Server] offers.
type Resource struct {
	// Definition is MCP's Resource object ({"uri", "name", ...}), or with
	// Template its ResourceTemplate object ({"uriTemplate", "name", ...}).
	Definition json.RawMessage
	Template   bool
	// Read reads the resource at uri: MCP's ReadResourceResult as JSON.
	Read func(ctx context.Context, uri string) (json.RawMessage, error)
	// Complete, when set, completes an argument of a template's URI.
	Complete func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
}

// catalog is what a Server offers besides tools, by prompt name,
// resource URI and template.
type catalog struct {
	prompts   map[string]*servedPrompt
	resources map[string]*servedResource // by URI, templates by "template:" + URI template
}

type servedPrompt struct {
	p   Prompt
	sig string
}

type servedResource struct {
	r   Resource
	sig string
}

// SetPrompts makes prompts the served prompts, as [Server.SetTools] does
// for tools: new ones offered, gone ones withdrawn, changed ones replaced,
// clients notified of the change. A prompt whose definition is not a valid
// MCP Prompt with a name, or whose name another shares, is left out and
// named in the error (wrapping ErrToolRefused); the others are served.
func (s *Server) SetPrompts(prompts []Prompt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing.Lock()
	defer s.listing.Unlock()
	var errs []error
	next := map[string]*servedPrompt{}
	defs := map[string]*sdk.Prompt{}
	for i, p := range prompts {
		var def sdk.Prompt
		if err := json.Unmarshal(p.Definition, &def); err != nil || def.Name == "" || p.Get == nil {
			errs = append(errs, fmt.Errorf("%w: prompt %d: not an MCP prompt with a name and a Get function (%v)", ErrToolRefused, i, err))
			continue
		}
		if next[def.Name] != nil {
			errs = append(errs, fmt.Errorf("%w: two prompts are named %q: only the first is served", ErrToolRefused, def.Name))
			continue
		}
		next[def.Name] = &servedPrompt{p: p, sig: string(p.Definition)}
		defs[def.Name] = &def
	}
	var gone []string
	for name := range s.cat.prompts {
		if next[name] == nil {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	if len(gone) > 0 {
		s.srv.RemovePrompts(gone...)
	}
	for name, sp := range next {
		if old := s.cat.prompts[name]; old != nil && old.sig == sp.sig {
			continue
		}
		s.srv.AddPrompt(defs[name], s.promptHandler(name))
	}
	s.cat.prompts = next
	return errors.Join(errs...)
}

// SetResources makes resources the served resources and templates, as
// SetPrompts does for prompts.
func (s *Server) SetResources(resources []Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing.Lock()
	defer s.listing.Unlock()
	var errs []error
	next := map[string]*servedResource{}
	defs := map[string]any{}
	for i, r := range resources {
		var (
			key string
			def any
			err error
		)
		if r.Template {
			var t sdk.ResourceTemplate
			if err = json.Unmarshal(r.Definition, &t); err == nil && t.URITemplate != "" && t.Name != "" {
				key, def = "template:"+t.URITemplate, &t
			}
		} else {
			var res sdk.Resource
			if err = json.Unmarshal(r.Definition, &res); err == nil && res.URI != "" && res.Name != "" {
				key, def = res.URI, &res
			}
		}
		if key == "" || r.Read == nil {
			errs = append(errs, fmt.Errorf("%w: resource %d: not an MCP resource or template with a URI, a name and a Read function (%v)", ErrToolRefused, i, err))
			continue
		}
		if next[key] != nil {
			errs = append(errs, fmt.Errorf("%w: two resources have the URI %q: only the first is served", ErrToolRefused, key))
			continue
		}
		next[key] = &servedResource{r: r, sig: string(r.Definition)}
		defs[key] = def
	}
	var gone, goneTemplates []string
	for key, old := range s.cat.resources {
		if next[key] != nil {
			continue
		}
		if old.r.Template {
			goneTemplates = append(goneTemplates, key[len("template:"):])
		} else {
			gone = append(gone, key)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	if len(goneTemplates) > 0 {
		s.srv.RemoveResourceTemplates(goneTemplates...)
	}
	for key, sr := range next {
		if old := s.cat.resources[key]; old != nil && old.sig == sr.sig {
			continue
		}
		switch def := defs[key].(type) {
		case *sdk.ResourceTemplate:
			s.srv.AddResourceTemplate(def, s.resourceHandler(key))
		case *sdk.Resource:
			s.srv.AddResource(def, s.resourceHandler(key))
		}
	}
	s.cat.resources = next
	return errors.Join(errs...)
}

// promptHandler renders the prompt that is current under name when a
// request arrives.
func (s *Server) promptHandler(name string) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		s.mu.Lock()
		sp := s.cat.prompts[name]
		s.mu.Unlock()
		if sp == nil {
			return nil, fmt.Errorf("no prompt %q", name)
		}
		raw, err := sp.p.Get(ctx, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		var res sdk.GetPromptResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("prompt %q: its result is not an MCP GetPromptResult: %v", name, err)
		}
		return &res, nil
	}
}

// resourceHandler reads from the resource or template that is current
// under key when a request arrives.
func (s *Server) resourceHandler(key string) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		s.mu.Lock()
		sr := s.cat.resources[key]
		s.mu.Unlock()
		if sr == nil {
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		}
		raw, err := sr.r.Read(ctx, req.Params.URI)
		if err != nil {
			return nil, err
		}
		var res sdk.ReadResourceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("resource %s: its result is not an MCP ReadResourceResult: %v", req.Params.URI, err)
		}
		return &res, nil
	}
}

// complete answers completion/complete from the prompt or resource
// template the reference names; none offered means no values.
func (s *Server) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	var fn func(context.Context, json.RawMessage) (json.RawMessage, error)
	s.mu.Lock()
	if ref := req.Params.Ref; ref != nil {
		switch ref.Type {
		case "ref/prompt":
			if sp := s.cat.prompts[ref.Name]; sp != nil {
				fn = sp.p.Complete
			}
		case "ref/resource":
			if sr := s.cat.resources["template:"+ref.URI]; sr != nil {
				fn = sr.r.Complete
			} else if sr := s.cat.resources[ref.URI]; sr != nil {
				fn = sr.r.Complete
			}
		}
	}
	s.mu.Unlock()
	if fn == nil {
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}, nil
	}
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	raw, err := fn(ctx, params)
	if err != nil {
		return nil, err
	}
	var res sdk.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("completion: the answer is not an MCP CompleteResult: %v", err)
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return &res, nil
}
