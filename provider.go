package autoagent

import (
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
)

// ProviderConfig selects and configures a model provider by name, the way
// the CLI's --provider, --model, --base-url and --api-key-env flags do
// (package providers/catalog, the one table of providers by name).
type ProviderConfig = catalog.Config

// ErrUnknownProvider is wrapped by NewProvider's error for a name it does
// not know.
var ErrUnknownProvider = catalog.ErrUnknown

// ErrMissingSetting is wrapped by NewProvider's error when the provider
// needs a field the config leaves empty: BaseURL for openai-compatible,
// ScriptFile for scripted.
var ErrMissingSetting = catalog.ErrMissingSetting

// ProviderNames lists the names NewProvider accepts.
func ProviderNames() []string { return catalog.Names() }

// DefaultAPIKeyEnv returns the environment variable a provider reads its key
// from by default ("" for providers that need none).
func DefaultAPIKeyEnv(name string) string { return catalog.DefaultAPIKeyEnv(name) }

// NewProvider builds the provider cfg names (catalog.New). Its error wraps
// ErrUnknownProvider for a name it does not know and ErrMissingSetting when
// the provider needs a field cfg leaves empty.
func NewProvider(cfg ProviderConfig) (llm.Provider, error) { return catalog.New(cfg) }
