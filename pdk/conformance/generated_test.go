package conformance_test

import "strings"

// envelopeError is the output for a call document that is not valid JSON.
const envelopeError = `{"content":[{"type":"text","text":"invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}"}],"isError":true}`

// generatedCases are the cases too large to keep in cases.txt: nesting at
// Go's limit of 10000 levels (the document's object, params and arguments
// are three of them; an empty array is a level too), and a large text.
func generatedCases() []testCase {
	deep := func(arrays int) []byte {
		return []byte(`{"params":{"name":"word_count","arguments":{"text":"a","deep":` +
			strings.Repeat("[", arrays) + strings.Repeat("]", arrays) + `}}}`)
	}
	const lines = 20000 // "lorem ipsum dolor\n": 3 words, 18 characters
	big := `{"params":{"name":"word_count","arguments":{"text":"` + strings.Repeat(`lorem ipsum dolor\n`, lines) + `"}}}`
	return []testCase{
		{name: "depth-10000", input: deep(9997),
			output: []byte(`{"content":[{"type":"text","text":"invalid arguments: deep: unknown property (not in the schema)"}],"isError":true}`)},
		{name: "depth-10001", input: deep(9998), output: []byte(envelopeError)},
		{name: "large-text", input: []byte(big),
			output: []byte(`{"content":[{"type":"text","text":"{\"words\":60000,\"lines\":20000,\"chars\":360000}"}],"structuredContent":{"words":60000,"lines":20000,"chars":360000}}`)},
	}
}
