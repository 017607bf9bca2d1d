# pdk: the word_count conformance modules (one per PDK language) that
# pdk/conformance tests load, and the first-party plugins/*.wasm built with
# the Go PDK. Each module is rebuilt only when its sources or its PDK
# changed; the builds go through internal/toolbuild, the code behind
# `autoagent tools build`. Toolchains: .ci/install.d/pdk.sh (make deps).

.PHONY: pdk-conformance plugins-pdk

PDKBUILD   := $(GO) run ./internal/toolbuild/pdkbuild -q
PDK_CONF   := pdk/conformance
PDK_OUT    := $(PDK_CONF)/build
TOOLBUILD_SRC := $(filter-out %_test.go,$(wildcard internal/toolbuild/*.go internal/toolbuild/pdkbuild/*.go))

PDK_GO_SRC  := $(filter-out %_test.go,$(wildcard pdk/go/*.go pdk/go/extism/*.go)) pdk/go/go.mod
PDK_MODULES := $(addprefix $(PDK_OUT)/word_count.,$(addsuffix .wasm,go c rust assemblyscript zig))

PDK_KV_MODULES := $(addprefix $(PDK_OUT)/kv.,$(addsuffix .wasm,go c rust assemblyscript zig))

pdk-conformance: $(PDK_MODULES) $(PDK_OUT)/capabilities.go.wasm $(PDK_KV_MODULES)

$(PDK_OUT)/word_count.go.wasm: $(PDK_GO_SRC) $(wildcard $(PDK_CONF)/go/*.go) $(PDK_CONF)/go/go.mod $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/go

# A Go-PDK module with one tool per capability function (capabilities_test.go).
$(PDK_OUT)/capabilities.go.wasm: $(PDK_GO_SRC) $(wildcard $(PDK_CONF)/go/capabilities/*.go) $(PDK_CONF)/go/go.mod $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/go/capabilities

$(PDK_OUT)/word_count.c.wasm: pdk/c/autoagent.h $(PDK_CONF)/c/word_count.c $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/c

$(PDK_OUT)/word_count.rust.wasm: pdk/rust/autoagent.rs $(PDK_CONF)/rust/word_count.rs $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/rust

$(PDK_OUT)/word_count.assemblyscript.wasm: pdk/assemblyscript/assembly/autoagent.ts pdk/assemblyscript/asconfig.json $(wildcard $(PDK_CONF)/assemblyscript/assembly/*.ts) $(PDK_CONF)/assemblyscript/asconfig.json $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/assemblyscript

$(PDK_OUT)/word_count.zig.wasm: pdk/zig/autoagent.zig $(PDK_CONF)/zig/word_count.zig $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/zig

# The kv conformance modules: the same four kv tools in every language
# (SPEC.md "The kv module", kv_test.go).
$(PDK_OUT)/kv.go.wasm: $(PDK_GO_SRC) $(wildcard $(PDK_CONF)/go/kv/*.go) $(PDK_CONF)/go/go.mod $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/go/kv

$(PDK_OUT)/kv.c.wasm: pdk/c/autoagent.h $(PDK_CONF)/c/kv/kv.c $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/c/kv

$(PDK_OUT)/kv.rust.wasm: pdk/rust/autoagent.rs $(PDK_CONF)/rust/kv/kv.rs $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/rust/kv

$(PDK_OUT)/kv.assemblyscript.wasm: pdk/assemblyscript/assembly/autoagent.ts pdk/assemblyscript/asconfig.json $(PDK_CONF)/assemblyscript/kv/assembly/index.ts $(PDK_CONF)/assemblyscript/kv/asconfig.json $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/assemblyscript/kv

$(PDK_OUT)/kv.zig.wasm: pdk/zig/autoagent.zig $(PDK_CONF)/zig/kv/kv.zig $(TOOLBUILD_SRC)
	@mkdir -p $(@D)
	$(PDKBUILD) -o $@ $(PDK_CONF)/zig/kv

test: pdk-conformance
bench: pdk-conformance

# First-party plugins: plugins/src/NAME (Go PDK) -> plugins/NAME.wasm. The
# modules are committed, so `make demo` needs no toolchain; `make plugins`
# rebuilds those whose sources (or the Go PDK) changed.
PLUGIN_NAMES := http_get read_file write_file kv text_tools
PLUGIN_WASM  := $(addprefix plugins/,$(addsuffix .wasm,$(PLUGIN_NAMES)))

plugins: $(PLUGIN_WASM)
test: $(PLUGIN_WASM)

define plugin_rule
plugins/$(1).wasm: $(filter-out %_test.go,$(wildcard plugins/src/$(1)/*.go)) plugins/src/go.mod $(PDK_GO_SRC) $(TOOLBUILD_SRC)
	$$(PDKBUILD) -o $$@ plugins/src/$(1)
endef
$(foreach p,$(PLUGIN_NAMES),$(eval $(call plugin_rule,$(p))))

# pdk/go is its own module (it builds for GOOS=wasip1, and tool authors
# import it alone), so the main module's `go test ./...` does not reach it:
# test it natively here, and vet it and the guest modules built with it for
# the target they run on.
.PHONY: pdk-go-test
pdk-go-test:
	cd pdk/go && $(GO) test -race -count=1 ./...
	cd pdk/go && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	cd plugins/src && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	cd pdk/conformance/go && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...

test: pdk-go-test
