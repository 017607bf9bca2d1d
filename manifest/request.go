package manifest

import "slices"

// requestKinds are the kinds a module may request without naming a value:
// a generic tool (fetch a URL, read a file) cannot know which host or
// directory its operator will give it, only that it needs one.
var requestKinds = []Kind{KindNet, KindFSRead, KindFSWrite, KindFSWorkspace, KindEnv, KindKV, KindTools, KindConfig}

// ParseRequest parses one capability a module requests in its describe
// document. It accepts every grant string, and also a bare kind ("net",
// "fs.read", "fs.write", "fs.workspace", "env", "kv", "tools", "config") meaning
// "some grant of this kind, the operator's choice"; such a request has no
// value, and [Grant.Covers] lets any grant of the kind satisfy it (fs.write
// also covers fs.workspace and fs.read, fs.workspace fs.read). A bare kind is never a valid grant: ParseGrant refuses it.
func ParseRequest(s string) (Grant, error) {
	if slices.Contains(requestKinds, Kind(s)) {
		return Grant{Kind: Kind(s)}, nil
	}
	return ParseGrant(s)
}

// ParseRequests parses every requested capability, returning the first error.
func ParseRequests(ss []string) ([]Grant, error) {
	out := make([]Grant, 0, len(ss))
	for _, s := range ss {
		g, err := ParseRequest(s)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// IsAny reports whether g is a bare-kind request (see ParseRequest): a
// capability of its kind with no value chosen.
func (g Grant) IsAny() bool {
	switch g.Kind {
	case KindNet:
		return g.Host == ""
	case KindFSRead, KindFSWrite, KindFSWorkspace:
		return g.Path == ""
	case KindEnv, KindKV, KindTools, KindConfig:
		return g.Name == ""
	}
	return false
}

// Missing returns the requests of requested that no grant of granted
// satisfies: what a module asked for and will be refused. A bare-kind
// request is satisfied by any grant of its kind, or of an fs kind that
// covers it (fs.read by fs.workspace or fs.write, fs.workspace by
// fs.write); a specific request by a grant that covers it.
func Missing(requested, granted []Grant) []Grant {
	var out []Grant
	for _, r := range requested {
		ok := false
		for _, g := range granted {
			if r.IsAny() && (g.Kind == r.Kind || r.IsFS() && g.IsFS() && fsRank(g.Kind) >= fsRank(r.Kind)) || g.Covers(r) {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, r)
		}
	}
	return out
}
