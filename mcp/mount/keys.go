package mount

import (
	"fmt"
	"os"
	"regexp"

	"github.com/autoagent-go/autoagent"
)

// fileKeys is the agent file's mcp key.
type fileKeys struct {
	MCP []fileServer `yaml:"mcp"`
}

type fileServer struct {
	Command []string `yaml:"command"`
	URL     string   `yaml:"url"`
	// Env names variables of this process passed to the server's
	// process: secrets stay in the environment, never in the file.
	Env     []string `yaml:"env"`
	Prefix  string   `yaml:"prefix"`
	Include []string `yaml:"include"`
	Trusted bool     `yaml:"trusted"`
	Egress  bool     `yaml:"egress"`
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Keys reads an agent file's mcp key into Servers (autoagent.Load):
//
//	mcp:
//	  - command: [node, crm-server.js]
//	    env: [CRM_TOKEN]           # passed from this process's environment
//	    prefix: crm_
//	  - url: https://mcp.example.com/mcp
//
// env names variables, never values: each is passed with its value in
// this process's environment when Load reads the file.
func Keys() autoagent.FeatureKeys { return keys{} }

type keys struct{}

func (keys) Layout() any { return &fileKeys{} }

func (keys) Feature(layout any, _ string) (autoagent.Feature, error) {
	var ss Servers
	for i, m := range layout.(*fileKeys).MCP {
		s := Server{Command: m.Command, URL: m.URL, Prefix: m.Prefix, Include: m.Include, Trusted: m.Trusted, Egress: m.Egress}
		if (len(m.Command) == 0) == (m.URL == "") {
			return nil, fmt.Errorf("mcp[%d]: give a command or a url", i)
		}
		for _, name := range m.Env {
			if !envName.MatchString(name) {
				return nil, fmt.Errorf("mcp[%d].env: %q is not a variable name (list the names of variables to pass, never their values)", i, name)
			}
			if v, ok := os.LookupEnv(name); ok {
				s.Env = append(s.Env, name+"="+v)
			}
		}
		ss = append(ss, s)
	}
	if len(ss) == 0 {
		return nil, nil
	}
	return ss, nil
}
