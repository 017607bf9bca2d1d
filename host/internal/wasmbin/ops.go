package wasmbin

// sig is the operand signature of a numeric instruction: up to two
// parameters and one result (0: none).
type sig struct {
	a, b, res ValType
}

// numeric holds the signatures of opcodes 0x45-0xc4.
var numeric [256]sig

func init() {
	set := func(lo, hi int, s sig) {
		for op := lo; op <= hi; op++ {
			numeric[op] = s
		}
	}
	set(0x45, 0x45, sig{I32, 0, I32})   // i32.eqz
	set(0x46, 0x4f, sig{I32, I32, I32}) // i32 comparisons
	set(0x50, 0x50, sig{I64, 0, I32})   // i64.eqz
	set(0x51, 0x5a, sig{I64, I64, I32}) // i64 comparisons
	set(0x5b, 0x60, sig{F32, F32, I32}) // f32 comparisons
	set(0x61, 0x66, sig{F64, F64, I32}) // f64 comparisons
	set(0x67, 0x69, sig{I32, 0, I32})   // i32 clz ctz popcnt
	set(0x6a, 0x78, sig{I32, I32, I32}) // i32 arithmetic
	set(0x79, 0x7b, sig{I64, 0, I64})   // i64 clz ctz popcnt
	set(0x7c, 0x8a, sig{I64, I64, I64}) // i64 arithmetic
	set(0x8b, 0x91, sig{F32, 0, F32})   // f32 unary
	set(0x92, 0x98, sig{F32, F32, F32}) // f32 binary
	set(0x99, 0x9f, sig{F64, 0, F64})   // f64 unary
	set(0xa0, 0xa6, sig{F64, F64, F64}) // f64 binary
	set(0xa7, 0xa7, sig{I64, 0, I32})   // i32.wrap_i64
	set(0xa8, 0xa9, sig{F32, 0, I32})   // i32.trunc_f32
	set(0xaa, 0xab, sig{F64, 0, I32})   // i32.trunc_f64
	set(0xac, 0xad, sig{I32, 0, I64})   // i64.extend_i32
	set(0xae, 0xaf, sig{F32, 0, I64})   // i64.trunc_f32
	set(0xb0, 0xb1, sig{F64, 0, I64})   // i64.trunc_f64
	set(0xb2, 0xb3, sig{I32, 0, F32})   // f32.convert_i32
	set(0xb4, 0xb5, sig{I64, 0, F32})   // f32.convert_i64
	set(0xb6, 0xb6, sig{F64, 0, F32})   // f32.demote_f64
	set(0xb7, 0xb8, sig{I32, 0, F64})   // f64.convert_i32
	set(0xb9, 0xba, sig{I64, 0, F64})   // f64.convert_i64
	set(0xbb, 0xbb, sig{F32, 0, F64})   // f64.promote_f32
	set(0xbc, 0xbc, sig{F32, 0, I32})   // i32.reinterpret_f32
	set(0xbd, 0xbd, sig{F64, 0, I64})   // i64.reinterpret_f64
	set(0xbe, 0xbe, sig{I32, 0, F32})   // f32.reinterpret_i32
	set(0xbf, 0xbf, sig{I64, 0, F64})   // f64.reinterpret_i64
	set(0xc0, 0xc1, sig{I32, 0, I32})   // i32.extend8_s, extend16_s
	set(0xc2, 0xc4, sig{I64, 0, I64})   // i64.extend8_s, 16_s, 32_s
}

// truncSat holds the signatures of 0xfc 0-7.
var truncSat = [8]sig{
	{F32, 0, I32}, {F32, 0, I32}, {F64, 0, I32}, {F64, 0, I32},
	{F32, 0, I64}, {F32, 0, I64}, {F64, 0, I64}, {F64, 0, I64},
}

// memOp describes a load (store false) or store of opcodes 0x28-0x3e; t
// is 0 for other opcodes.
type memOp struct {
	t     ValType
	size  uint32 // bytes accessed
	store bool
}

var memOps = [256]memOp{
	0x28: {I32, 4, false}, 0x29: {I64, 8, false}, 0x2a: {F32, 4, false}, 0x2b: {F64, 8, false},
	0x2c: {I32, 1, false}, 0x2d: {I32, 1, false}, 0x2e: {I32, 2, false}, 0x2f: {I32, 2, false},
	0x30: {I64, 1, false}, 0x31: {I64, 1, false}, 0x32: {I64, 2, false}, 0x33: {I64, 2, false},
	0x34: {I64, 4, false}, 0x35: {I64, 4, false},
	0x36: {I32, 4, true}, 0x37: {I64, 8, true}, 0x38: {F32, 4, true}, 0x39: {F64, 8, true},
	0x3a: {I32, 1, true}, 0x3b: {I32, 2, true}, 0x3c: {I64, 1, true}, 0x3d: {I64, 2, true}, 0x3e: {I64, 4, true},
}

// The shapes of SIMD instructions.
type simdKind byte

const (
	simdNone      simdKind = iota // not an instruction of WebAssembly 2.0
	simdUnary                     // v128 -> v128
	simdBinary                    // v128 v128 -> v128
	simdTernary                   // v128 v128 v128 -> v128
	simdTest                      // v128 -> i32
	simdShift                     // v128 i32 -> v128
	simdSplat                     // t -> v128
	simdExtract                   // v128 -> t, lane
	simdReplace                   // v128 t -> v128, lane
	simdLoad                      // memarg; i32 -> v128
	simdStore                     // memarg; i32 v128 ->
	simdLoadLane                  // memarg, lane; i32 v128 -> v128
	simdStoreLane                 // memarg, lane; i32 v128 ->
	simdConst                     // 16 bytes; -> v128
	simdShuffle                   // 16 lanes; v128 v128 -> v128
)

type simdOp struct {
	kind  simdKind
	t     ValType // the scalar of splat, extract and replace
	lanes byte    // lanes of extract, replace and lane loads/stores
	size  uint32  // bytes a load or store accesses
}

var simd [256]simdOp

func init() {
	set := func(lo, hi int, op simdOp) {
		for i := lo; i <= hi; i++ {
			simd[i] = op
		}
	}
	set(0, 0, simdOp{kind: simdLoad, size: 16})
	set(1, 6, simdOp{kind: simdLoad, size: 8}) // load8x8, 16x4, 32x2 (s and u)
	set(7, 7, simdOp{kind: simdLoad, size: 1}) // load8_splat
	set(8, 8, simdOp{kind: simdLoad, size: 2})
	set(9, 9, simdOp{kind: simdLoad, size: 4})
	set(10, 10, simdOp{kind: simdLoad, size: 8})
	set(11, 11, simdOp{kind: simdStore, size: 16})
	set(12, 12, simdOp{kind: simdConst})
	set(13, 13, simdOp{kind: simdShuffle})
	set(14, 14, simdOp{kind: simdBinary}) // swizzle
	set(15, 17, simdOp{kind: simdSplat, t: I32})
	set(18, 18, simdOp{kind: simdSplat, t: I64})
	set(19, 19, simdOp{kind: simdSplat, t: F32})
	set(20, 20, simdOp{kind: simdSplat, t: F64})
	set(21, 22, simdOp{kind: simdExtract, t: I32, lanes: 16})
	set(23, 23, simdOp{kind: simdReplace, t: I32, lanes: 16})
	set(24, 25, simdOp{kind: simdExtract, t: I32, lanes: 8})
	set(26, 26, simdOp{kind: simdReplace, t: I32, lanes: 8})
	set(27, 27, simdOp{kind: simdExtract, t: I32, lanes: 4})
	set(28, 28, simdOp{kind: simdReplace, t: I32, lanes: 4})
	set(29, 29, simdOp{kind: simdExtract, t: I64, lanes: 2})
	set(30, 30, simdOp{kind: simdReplace, t: I64, lanes: 2})
	set(31, 31, simdOp{kind: simdExtract, t: F32, lanes: 4})
	set(32, 32, simdOp{kind: simdReplace, t: F32, lanes: 4})
	set(33, 33, simdOp{kind: simdExtract, t: F64, lanes: 2})
	set(34, 34, simdOp{kind: simdReplace, t: F64, lanes: 2})
	set(35, 76, simdOp{kind: simdBinary}) // comparisons
	set(77, 77, simdOp{kind: simdUnary})  // v128.not
	set(78, 81, simdOp{kind: simdBinary}) // and andnot or xor
	set(82, 82, simdOp{kind: simdTernary})
	set(83, 83, simdOp{kind: simdTest}) // any_true
	set(84, 84, simdOp{kind: simdLoadLane, lanes: 16, size: 1})
	set(85, 85, simdOp{kind: simdLoadLane, lanes: 8, size: 2})
	set(86, 86, simdOp{kind: simdLoadLane, lanes: 4, size: 4})
	set(87, 87, simdOp{kind: simdLoadLane, lanes: 2, size: 8})
	set(88, 88, simdOp{kind: simdStoreLane, lanes: 16, size: 1})
	set(89, 89, simdOp{kind: simdStoreLane, lanes: 8, size: 2})
	set(90, 90, simdOp{kind: simdStoreLane, lanes: 4, size: 4})
	set(91, 91, simdOp{kind: simdStoreLane, lanes: 2, size: 8})
	set(92, 92, simdOp{kind: simdLoad, size: 4}) // load32_zero
	set(93, 93, simdOp{kind: simdLoad, size: 8}) // load64_zero
	set(94, 98, simdOp{kind: simdUnary})         // demote, promote, i8x16 abs neg popcnt
	set(99, 100, simdOp{kind: simdTest})         // i8x16 all_true bitmask
	set(101, 102, simdOp{kind: simdBinary})      // narrow
	set(103, 106, simdOp{kind: simdUnary})       // f32x4 ceil floor trunc nearest
	set(107, 109, simdOp{kind: simdShift})
	set(110, 115, simdOp{kind: simdBinary})
	set(116, 117, simdOp{kind: simdUnary}) // f64x2 ceil floor
	set(118, 121, simdOp{kind: simdBinary})
	set(122, 122, simdOp{kind: simdUnary}) // f64x2.trunc
	set(123, 123, simdOp{kind: simdBinary})
	set(124, 129, simdOp{kind: simdUnary}) // extadd_pairwise, i16x8 abs neg
	set(130, 130, simdOp{kind: simdBinary})
	set(131, 132, simdOp{kind: simdTest})
	set(133, 134, simdOp{kind: simdBinary})
	set(135, 138, simdOp{kind: simdUnary}) // extend
	set(139, 141, simdOp{kind: simdShift})
	set(142, 147, simdOp{kind: simdBinary})
	set(148, 148, simdOp{kind: simdUnary}) // f64x2.nearest
	set(149, 153, simdOp{kind: simdBinary})
	set(155, 159, simdOp{kind: simdBinary})
	set(160, 161, simdOp{kind: simdUnary})
	set(163, 164, simdOp{kind: simdTest})
	set(167, 170, simdOp{kind: simdUnary})
	set(171, 173, simdOp{kind: simdShift})
	set(174, 174, simdOp{kind: simdBinary})
	set(177, 177, simdOp{kind: simdBinary})
	set(181, 186, simdOp{kind: simdBinary})
	set(188, 191, simdOp{kind: simdBinary})
	set(192, 193, simdOp{kind: simdUnary})
	set(195, 196, simdOp{kind: simdTest})
	set(199, 202, simdOp{kind: simdUnary})
	set(203, 205, simdOp{kind: simdShift})
	set(206, 206, simdOp{kind: simdBinary})
	set(209, 209, simdOp{kind: simdBinary})
	set(213, 223, simdOp{kind: simdBinary})
	set(224, 225, simdOp{kind: simdUnary})
	set(227, 227, simdOp{kind: simdUnary})
	set(228, 235, simdOp{kind: simdBinary})
	set(236, 237, simdOp{kind: simdUnary})
	set(239, 239, simdOp{kind: simdUnary})
	set(240, 247, simdOp{kind: simdBinary})
	set(248, 255, simdOp{kind: simdUnary}) // conversions
}

// one holds a single-value result list per value type, for block types.
var one = func() (t [256][]ValType) {
	for _, v := range []ValType{I32, I64, F32, F64, V128, FuncRef, ExternRef} {
		t[v] = []ValType{v}
	}
	return t
}()
