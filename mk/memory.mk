# Memory: the multi-session memory eval.
#
# `make eval-memory` measures a real model when an API key is set
# (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or DEEPSEEK_API_KEY;
# AUTOAGENT_EVAL_PROVIDER / AUTOAGENT_EVAL_MODEL / AUTOAGENT_EVAL_BASE_URL
# choose another) and runs the deterministic scripted model otherwise.
# Pass flags with EVAL_MEMORY_FLAGS, e.g. EVAL_MEMORY_FLAGS='-configs none,fact -limit 3 -json bin/memory-eval.json'.

EVAL_MEMORY_FLAGS ?=

.PHONY: eval-memory
eval-memory:
	$(GO) run ./memory/eval/cmd/memory-eval $(EVAL_MEMORY_FLAGS)
