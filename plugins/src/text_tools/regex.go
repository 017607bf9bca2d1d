package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// RegexInput is the regex arguments.
type RegexInput struct {
	Pattern     string `json:"pattern" jsonschema:"the regular expression, RE2 syntax (no backreferences or lookaround); (?i) makes it case-insensitive"`
	Text        string `json:"text" jsonschema:"the text to search"`
	Mode        string `json:"mode,omitempty" enum:"find,match,replace,split" jsonschema:"find (default): list matches; match: whether it matches; replace: replace matches with replacement; split: split the text around matches"`
	Replacement string `json:"replacement,omitempty" jsonschema:"the replacement text for mode replace; $1 or ${name} insert a group"`
	Max         int    `json:"max,omitempty" jsonschema:"at most this many matches or parts (default 100, at most 10000)"`
}

// Match is one match of mode find.
type Match struct {
	Text   string            `json:"text"`
	Start  int               `json:"start" jsonschema:"byte offset of the match"`
	Groups []string          `json:"groups,omitempty" jsonschema:"the numbered groups"`
	Named  map[string]string `json:"named,omitempty" jsonschema:"the named groups"`
}

// RegexOutput is the structured result.
type RegexOutput struct {
	Matched bool     `json:"matched"`
	Matches []Match  `json:"matches,omitempty"`
	Result  string   `json:"result,omitempty" jsonschema:"the text after replace"`
	Parts   []string `json:"parts,omitempty" jsonschema:"the pieces after split"`
	Count   int      `json:"count" jsonschema:"matches found (or parts after split)"`
}

func regex(_ context.Context, in RegexInput) (pdk.Result, error) {
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return pdk.Result{}, fmt.Errorf("pattern: %v", err)
	}
	limit := in.Max
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 10000)
	var out RegexOutput
	var text string
	switch in.Mode {
	case "", "find":
		names := re.SubexpNames()
		for _, loc := range re.FindAllStringSubmatchIndex(in.Text, limit) {
			m := Match{Text: in.Text[loc[0]:loc[1]], Start: loc[0]}
			for g := 1; g < len(loc)/2; g++ {
				v := ""
				if loc[2*g] >= 0 {
					v = in.Text[loc[2*g]:loc[2*g+1]]
				}
				m.Groups = append(m.Groups, v)
				if names[g] != "" {
					if m.Named == nil {
						m.Named = map[string]string{}
					}
					m.Named[names[g]] = v
				}
			}
			out.Matches = append(out.Matches, m)
		}
		out.Count, out.Matched = len(out.Matches), len(out.Matches) > 0
		var b strings.Builder
		fmt.Fprintf(&b, "%d matches", out.Count)
		for _, m := range out.Matches {
			fmt.Fprintf(&b, "\n%d: %q", m.Start, m.Text)
			if len(m.Groups) > 0 {
				fmt.Fprintf(&b, " groups %q", m.Groups)
			}
		}
		text = b.String()
	case "match":
		out.Matched = re.MatchString(in.Text)
		if out.Matched {
			out.Count = 1
		}
		text = fmt.Sprint(out.Matched)
	case "replace":
		var b []byte
		last := 0
		matches := re.FindAllStringSubmatchIndex(in.Text, limit)
		for _, loc := range matches {
			b = append(b, in.Text[last:loc[0]]...)
			b = re.ExpandString(b, in.Replacement, in.Text, loc)
			last = loc[1]
		}
		out.Result = string(append(b, in.Text[last:]...))
		out.Count, out.Matched = len(matches), len(matches) > 0
		text = out.Result
	case "split":
		out.Parts = re.Split(in.Text, limit)
		out.Count, out.Matched = len(out.Parts), len(out.Parts) > 1
		text = strings.Join(quoteAll(out.Parts), "\n")
	}
	r, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	r.Content = []pdk.Content{{Type: "text", Text: text}}
	return r, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
