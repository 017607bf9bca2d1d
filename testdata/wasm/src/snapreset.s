# snapreset.s: snapsecret.s without the write into the function table
# (snapsecret.c built with NO_TABLE: snapreset.wasm).

	.globaltype	secret_g, i64
secret_g:

	.section	.text.global_set,"",@
	.globl	global_set
	.type	global_set,@function
global_set:
	.functype	global_set (i64) -> ()
	local.get	0
	global.set	secret_g
	end_function

	.section	.text.global_get,"",@
	.globl	global_get
	.type	global_get,@function
global_get:
	.functype	global_get () -> (i64)
	global.get	secret_g
	end_function
