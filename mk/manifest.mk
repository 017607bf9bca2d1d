# manifest: the hash manifest, the plugins-directory loader and hot reload,
# and the `autoagent tools list|inspect|approve|revoke|verify` verbs. No build
# steps of their own; these targets run the area's tests, fuzzing and
# benchmarks, and check a plugins directory against its manifest.

MANIFEST_PKGS := ./manifest/
PLUGINDIR_RUN := 'Dir|Watch|Tamper|Sidecar|GrantsAndLimits|ToolNameConflicts|Publish|Quarantine|ChangeCallback|ExampleOpenDir'
PLUGINS  ?= plugins
FUZZTIME ?= 30s

.PHONY: test-manifest fuzz-manifest bench-manifest verify-plugins

test-manifest:
	$(GO) test -race -count=1 $(MANIFEST_PKGS)
	$(GO) test -race -count=1 -run $(PLUGINDIR_RUN) ./host/
	$(GO) test -race -count=1 -run 'TestTools(List|Inspect|Approve|Revoke|Verify|Corrupt|EndToEnd)|TestSafeText' ./cmd/autoagent/

# Each parser gets FUZZTIME; the seed corpus is manifest/testdata/fuzz.
fuzz-manifest:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./manifest/
	$(GO) test -run '^$$' -fuzz '^FuzzParseGrant$$' -fuzztime $(FUZZTIME) ./manifest/

bench-manifest:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./manifest/
	$(GO) test -run '^$$' -bench 'DirReload' -benchmem -benchtime $(BENCHTIME) ./host/

# Exit 1 when a file the manifest approves changed or is missing (CI guard
# for a committed plugins/manifest.json).
verify-plugins:
	$(GO) run ./cmd/autoagent tools verify --plugins $(PLUGINS)
