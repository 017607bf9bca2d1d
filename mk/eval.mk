# Evaluation (eval/, autoagent eval): an offline scripted suite whose cases
# fail on some runs by design, so pass^k < pass@1 shows (examples/eval).
.PHONY: eval-example
eval-example: build
	./examples/eval/eval.sh
