package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

type asToolIn struct {
	Request string `json:"request" jsonschema:"The request to handle, in natural language."`
}

type asToolOut struct {
	Output string `json:"output"`
	Steps  int    `json:"steps"`
	Tokens *int64 `json:"tokens,omitempty"`
}

// AsTool returns a tool that hands a request to a as a sub-agent: each call
// is a fresh, stateless run of a (its system prompt, then the request).
//
// The sub-run's token spend is reported to the calling run (see
// [ReportUsage]) and counts in its budget, failed runs included. A
// sub-agent failure (provider error, a bound) is an error result the
// calling model sees, never a failure of the calling run. A sub-run that
// ingested untrusted content taints the caller, and its output is framed
// as untrusted there. With a shared Tracer, the sub-run's events are
// children of the tool call that started it.
//
// The tool's SubAgent method returns a, for an engine that runs the
// sub-agent its own way (a durable run makes it a child workflow).
func (a *Agent) AsTool(name, description string) (tool.Tool, error) {
	t, err := tool.New(name, description, func(ctx context.Context, in asToolIn) (tool.Result, error) {
		if strings.TrimSpace(in.Request) == "" {
			return tool.Errorf("`request` is empty: say what the sub-agent should do"), nil
		}
		res, err := a.Run(ctx, in.Request)
		u, have, tainted := spendOf(res, err)
		if have {
			ReportUsage(ctx, u)
		}
		if tainted {
			ReportTaint(ctx)
		}
		if err != nil {
			return tool.Errorf("sub-agent %s failed: %v", name, err), nil
		}
		return SubAgentResult(res.Output, res.Steps, u, have), nil
	})
	if err != nil {
		return nil, err
	}
	return subAgentTool{t, a}, nil
}

// subAgentTool is AsTool's tool.
type subAgentTool struct {
	tool.Tool
	agent *Agent
}

// SubAgent returns the agent the tool runs.
func (t subAgentTool) SubAgent() *Agent { return t.agent }

// SubAgentResult is the result AsTool's tool returns for a sub-run that
// answered output in steps, having spent u (when have): the JSON
// {"output", "steps", "tokens"}.
func SubAgentResult(output string, steps int, u llm.Usage, have bool) tool.Result {
	out := asToolOut{Output: output, Steps: steps}
	if have {
		out.Tokens = &u.TotalTokens
	}
	res, err := tool.JSON(out)
	if err != nil {
		return tool.Errorf("sub-agent result: %v", err)
	}
	return res
}

// spendOf returns the usage and taint of a finished or failed run.
func spendOf(res *Result, err error) (llm.Usage, bool, bool) {
	if res != nil {
		return res.Usage, res.UsageReported, res.Tainted
	}
	var re *RunError
	if errors.As(err, &re) && re.State != nil {
		return re.State.Usage, re.State.HaveUsage, re.State.Tainted
	}
	return llm.Usage{}, false, false
}

// DelegateOptions configures [Delegate]. The zero value works.
type DelegateOptions struct {
	// Name is the tool's name; "" means "delegate".
	Name string
	// Description is the tool's description; "" lists the specialists and
	// asks the model to group its requests in one call.
	Description string
	// MaxParallel bounds the specialists working at once; 0 means 4.
	MaxParallel int
}

type delegateIn struct {
	Requests []delegateRequest `json:"requests" jsonschema:"The requests, each for one specialist. Group every request of this step in one call."`
}

type delegateRequest struct {
	Specialist string `json:"specialist" jsonschema:"The specialist's name."`
	Request    string `json:"request" jsonschema:"What the specialist should do, in natural language."`
}

type delegateResponse struct {
	Specialist string `json:"specialist"`
	Output     string `json:"output,omitempty"`
	Steps      int    `json:"steps,omitempty"`
	Tokens     *int64 `json:"tokens,omitempty"`
	Error      string `json:"error,omitempty"`
}

type delegateOut struct {
	Responses []delegateResponse `json:"responses"`
	Tokens    *int64             `json:"tokens"`
}

// Delegate returns one tool that sends requests to several specialist
// agents at once: {"requests": [{"specialist": "...", "request": "..."}]}.
// Requests to different specialists run concurrently (at most MaxParallel),
// requests to the same specialist one after the other; the call returns
// when all are done, with the responses in request order. An unknown
// specialist or a failed run is an error entry, not a failure of the whole
// call. Spend and taint flow to the calling run as with [Agent.AsTool]: when
// any specialist's run was tainted, the whole result is framed as untrusted.
func Delegate(specialists map[string]*Agent, opts DelegateOptions) (tool.Tool, error) {
	if len(specialists) == 0 {
		return nil, errors.New("loop: Delegate needs at least one specialist")
	}
	names := make([]string, 0, len(specialists))
	for n, a := range specialists {
		if a == nil {
			return nil, fmt.Errorf("loop: Delegate: specialist %q is nil", n)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	if opts.Name == "" {
		opts.Name = "delegate"
	}
	if opts.Description == "" {
		opts.Description = fmt.Sprintf("Hand requests to specialist agents, who work in parallel. Specialists: %s. Group all the requests you have now in one call.", strings.Join(names, ", "))
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 4
	}
	available := strings.Join(names, ", ")
	return tool.New(opts.Name, opts.Description, func(ctx context.Context, in delegateIn) (tool.Result, error) {
		if len(in.Requests) == 0 {
			return tool.Errorf("`requests` must be a non-empty list"), nil
		}
		out := delegateOut{Responses: make([]delegateResponse, len(in.Requests))}
		groups := map[string][]int{}
		var order []string
		for i, r := range in.Requests {
			out.Responses[i].Specialist = r.Specialist
			if specialists[r.Specialist] == nil {
				out.Responses[i].Error = "Unknown specialist. Available: " + available + "."
				continue
			}
			if _, ok := groups[r.Specialist]; !ok {
				order = append(order, r.Specialist)
			}
			groups[r.Specialist] = append(groups[r.Specialist], i)
		}
		var mu sync.Mutex
		var total llm.Usage
		var have, tainted bool
		sem := make(chan struct{}, opts.MaxParallel)
		var wg sync.WaitGroup
		for _, name := range order {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				a := specialists[name]
				for _, i := range groups[name] {
					res, err := a.Run(ctx, in.Requests[i].Request)
					u, h, t := spendOf(res, err)
					resp := &out.Responses[i]
					if err != nil {
						resp.Error = err.Error()
					} else {
						resp.Output, resp.Steps = res.Output, res.Steps
					}
					if h {
						tokens := u.TotalTokens
						resp.Tokens = &tokens
					}
					mu.Lock()
					if h {
						total, have = total.Add(u), true
					}
					tainted = tainted || t
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if have {
			ReportUsage(ctx, total)
			out.Tokens = &total.TotalTokens
		}
		if tainted {
			// The calling loop frames the whole result as untrusted.
			ReportTaint(ctx)
		}
		return tool.JSON(out)
	})
}
