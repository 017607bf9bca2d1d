package policy_test

import (
	"fmt"

	"github.com/autoagent-go/autoagent/policy"
)

func ExampleParse() {
	_, err := policy.Parse([]byte(`{"rules":[{"tool":"send_email","action":"deny","when":{"args":{"to":{"endswith":"@example.com"}}}}]}`))
	fmt.Println(err)
	// Output:
	// policy: rules[0].when.args.to.endswith: unknown operator (want eq, ne, in, not_in, starts_with, ends_with, contains, matches, max_length, max_items, lt, le, gt, ge, exists, path_within, url_host or not)
}
