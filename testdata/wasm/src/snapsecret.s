# snapsecret.s: the parts of snapsecret.c that C cannot say: a mutable
# wasm global of the module's own, and a write into its function table.

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

# table_copy sets table entry dst to the function of entry src.
	.section	.text.table_copy,"",@
	.globl	table_copy
	.type	table_copy,@function
table_copy:
	.functype	table_copy (i32, i32) -> ()
	local.get	0
	local.get	1
	table.get	__indirect_function_table
	table.set	__indirect_function_table
	end_function
