package serve

import _ "embed"

// openAPI is the API's description, served at GET /openapi.json.
//
//go:embed openapi.json
var openAPI []byte
