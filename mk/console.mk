# The operator console (serve/console): README shows two screenshots its
# browser tests take in headless Chromium (serve/console_browser_test.go).
# `make screenshots` runs those tests and copies their pictures to
# docs/img; a skipped test (no chromium) leaves none, and the rule fails.
.PHONY: screenshots
screenshots: deps
	@rm -rf .cache/screenshots && mkdir -p .cache/screenshots docs/img
	$(GO) test -count=1 -run '^TestConsoleInboxApprovesAndRunFinishes$$' -artifacts -outputdir $(CURDIR)/.cache/screenshots ./serve
	@for f in approvals-inbox.png run-timeline.png; do \
		p=$$(find .cache/screenshots -name $$f | head -n 1); \
		if [ -z "$$p" ]; then echo "screenshots: the test wrote no $$f (is chromium installed? make deps)"; exit 1; fi; \
		cp "$$p" docs/img/console-$$f && echo "docs/img/console-$$f"; \
	done
