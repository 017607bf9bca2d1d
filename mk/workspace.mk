# The workspace (package workspace): a fenced directory whose every change
# is journaled and can be rolled back, and its flagship example
# (examples/logaudit, offline with scripted models; a real provider when a
# key is set).

WORKSPACE_PKGS := ./workspace/ ./examples/logaudit/

.PHONY: test-workspace fuzz-workspace bench-workspace demo-logaudit

test-workspace:
	$(GO) test -race -count=1 $(WORKSPACE_PKGS)

fuzz-workspace:
	$(GO) test -run '^$$' -fuzz '^FuzzPathStaysInside$$' -fuzztime $(FUZZTIME) ./workspace/

# A 4 KiB journaled write against os.WriteFile in the same run, and a
# rollback of 1 000 changes.
bench-workspace:
	$(GO) test -run '^$$' -bench 'Write4KiB|OSWriteFile' -benchtime 2000x ./workspace/
	$(GO) test -run '^$$' -bench 'RollbackRun1000' -benchtime 5x ./workspace/

demo-logaudit:
	$(GO) run ./examples/logaudit -offline

demo: demo-logaudit
