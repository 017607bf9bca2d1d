// Package policy is the tool-policy language: rules written as data
// (JSON) that allow, deny or send to a person each tool call an agent's
// model asks for, by the tool's name, its arguments, its flags and the
// run's taint, and the built-in guardrails a policy file switches on. A
// parsed [Spec] is a [loop.Policy]; give it to an Agent.
//
//	spec, err := policy.Parse([]byte(`{
//	  "rules": [
//	    {"tool": "send_email", "action": "deny", "when": {"tainted": true},
//	     "reason": "no e-mail after reading untrusted content"},
//	    {"tool": "pay", "action": "approve", "reason": "payments need a human"}
//	  ],
//	  "guardrails": {"output": {"secrets": "block"}}
//	}`))
//	if err != nil {
//		return err // names the position: "policy: rules[0].when.tainted: want true or false"
//	}
//	agent := &loop.Agent{Provider: model, Tools: tools, Checks: loop.Checks{Policy: spec}}
//
// [Load] reads a policy file. Parsing is strict (an unknown key, action or
// operator, a wrong type or a bad regular expression is an [Error] naming
// its position); among the rules that match a call, deny wins over
// approve, which wins over allow. The loop knows nothing of this
// language: it asks its Agent.Checks.Policy for a [loop.Decision] per call, and
// adds the guardrails of a policy that implements
// [loop.PolicyGuardrails].
package policy
