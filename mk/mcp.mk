# mcp: the MCP client and server and `autoagent mcp serve`. No build steps
# of their own. The interoperability tests run against npm packages
# (the reference server-everything and the conformance suite) that
# .ci/install.d/mcp.sh installs into mcp/testdata/node; `make deps` runs it.

MCP_PKGS := ./mcp/
FUZZTIME ?= 30s

.PHONY: test-mcp mcp-conformance mcp-testdata fuzz-mcp bench-mcp demo-mcp

test-mcp:
	@bash .ci/install.d/mcp.sh
	$(GO) test -race -count=1 $(MCP_PKGS)
	$(GO) test -race -count=1 -run 'MCP' ./cmd/autoagent/

# The official conformance suite and reference server, verbosely: every
# check the suite scored is printed.
mcp-conformance:
	@bash .ci/install.d/mcp.sh
	$(GO) test -count=1 -v -run 'Conformance|ReferenceServer' $(MCP_PKGS) ./cmd/autoagent/

# Rebuilds the conformance suite's tool module from its C source (clang,
# lld and wasi-libc, which .ci/install.d/host.sh installs); the .wasm is
# committed, so tests need no toolchain.
mcp-testdata:
	bash mcp/testdata/conformance/build.sh

fuzz-mcp:
	$(GO) test -run '^$$' -fuzz '^FuzzExposedName$$' -fuzztime $(FUZZTIME) $(MCP_PKGS)
	$(GO) test -run '^$$' -fuzz '^FuzzObjectSchema$$' -fuzztime $(FUZZTIME) $(MCP_PKGS)

bench-mcp:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(MCP_PKGS)

# An agent mounting an MCP server's tools (the example starts itself as the
# server): offline, scripted model, exits 1 if the injected ticket wins.
demo-mcp:
	$(GO) run ./examples/mcp

demo: demo-mcp
