package wasmbin

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// reader decodes the binary format strictly: LEB128 numbers must fit their
// type with no stray bits, as the specification requires. The first
// failure panics with a *decodeError, which the entry points recover; the
// decoding code then reads straight through without checking every step.
type reader struct {
	b   []byte
	p   int
	fn  int // function being decoded, -1 outside code
	lim Limits
}

// decodeError unwinds a failed decode or validation to the entry point.
type decodeError struct{ err error }

func (r *reader) fail(malformed bool, format string, args ...any) {
	panic(decodeError{&Error{Offset: r.p, Func: r.fn, Malformed: malformed, Msg: fmt.Sprintf(format, args...)}})
}

func (r *reader) malformed(format string, args ...any) { r.fail(true, format, args...) }
func (r *reader) invalid(format string, args ...any)   { r.fail(false, format, args...) }

func (r *reader) limit(name, what string, max, got int) {
	r.limit64(name, what, int64(max), int64(got))
}

func (r *reader) limit64(name, what string, max, got int64) {
	panic(decodeError{&LimitError{Limit: name, What: what, Max: max, Got: got}})
}

func (r *reader) eof() bool { return r.p >= len(r.b) }

func (r *reader) byte() byte {
	if r.p >= len(r.b) {
		r.malformed("unexpected end")
	}
	c := r.b[r.p]
	r.p++
	return c
}

func (r *reader) peek() byte {
	if r.p >= len(r.b) {
		r.malformed("unexpected end")
	}
	return r.b[r.p]
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b)-r.p {
		r.malformed("unexpected end: %d bytes wanted, %d left", n, len(r.b)-r.p)
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

// u32 reads an unsigned LEB128 number of at most 32 bits.
func (r *reader) u32() uint32 {
	var v uint32
	for i := 0; ; i++ {
		c := r.byte()
		if i == 4 {
			if c&0xf0 != 0 {
				r.malformed("integer representation too long or too large")
			}
			return v | uint32(c)<<28
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
}

// count reads a vector length and checks that at least min bytes per
// entry remain, so a forged length cannot make the decoder allocate for
// entries that are not there.
func (r *reader) count(minEntry int) int {
	n := r.u32()
	if minEntry > 0 && uint64(n)*uint64(minEntry) > uint64(len(r.b)-r.p) {
		r.malformed("vector of %d entries longer than its section", n)
	}
	return int(n)
}

// s32 reads a signed LEB128 number of at most 32 bits.
func (r *reader) s32() int32 {
	var v int64
	for i := 0; ; i++ {
		c := r.byte()
		if i == 4 {
			// The last byte holds 4 value bits; the 3 above them must
			// repeat the sign bit.
			if hi := c & 0x78; c&0x80 != 0 || (hi != 0 && hi != 0x78) {
				r.malformed("integer representation too long or too large")
			}
			v |= int64(c&0x7f) << 28
			return int32(uint32(v))
		}
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << (7 * (i + 1))
			}
			return int32(v)
		}
	}
}

// s33 reads a signed LEB128 number of at most 33 bits (a block type index).
func (r *reader) s33() int64 {
	var v int64
	for i := 0; ; i++ {
		c := r.byte()
		if i == 4 {
			// 5 value bits; the 2 above them must repeat the sign bit.
			if hi := c & 0x70; c&0x80 != 0 || (hi != 0 && hi != 0x70) {
				r.malformed("integer representation too long or too large")
			}
			v |= int64(c&0x7f) << 28
			if c&0x40 != 0 {
				v |= -1 << 35
			}
			return v
		}
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << (7 * (i + 1))
			}
			return v
		}
	}
}

// s64 reads a signed LEB128 number of at most 64 bits.
func (r *reader) s64() int64 {
	var v int64
	for i := 0; ; i++ {
		c := r.byte()
		if i == 9 {
			// 1 value bit; the 6 above it must repeat it.
			if hi := c & 0x7f; c&0x80 != 0 || (hi != 0 && hi != 0x7f) {
				r.malformed("integer representation too long or too large")
			}
			return v | int64(c)<<63
		}
		v |= int64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if c&0x40 != 0 && i < 9 {
				v |= -1 << (7 * (i + 1))
			}
			return v
		}
	}
}

func (r *reader) name() string {
	n := r.count(1)
	b := r.bytes(n)
	if !utf8.Valid(b) {
		r.malformed("name is not valid UTF-8")
	}
	return string(b)
}

// The value types of WebAssembly 2.0. vtUnknown is the bottom type of
// validation's polymorphic stack.
type ValType byte

const (
	vtUnknown ValType = 0
	I32       ValType = 0x7f
	I64       ValType = 0x7e
	F32       ValType = 0x7d
	F64       ValType = 0x7c
	V128      ValType = 0x7b
	FuncRef   ValType = 0x70
	ExternRef ValType = 0x6f
)

func (t ValType) String() string {
	switch t {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	case V128:
		return "v128"
	case FuncRef:
		return "funcref"
	case ExternRef:
		return "externref"
	case vtUnknown:
		return "any"
	}
	return fmt.Sprintf("type 0x%02x", byte(t))
}

func (t ValType) isRef() bool { return t == FuncRef || t == ExternRef }

func (r *reader) valType() ValType {
	switch t := ValType(r.byte()); t {
	case I32, I64, F32, F64, V128, FuncRef, ExternRef:
		return t
	default:
		r.p--
		r.malformed("unsupported value type 0x%02x", byte(t))
	}
	return 0
}

func (r *reader) refType() ValType {
	switch t := ValType(r.byte()); t {
	case FuncRef, ExternRef:
		return t
	default:
		r.p--
		r.malformed("unsupported reference type 0x%02x", byte(t))
	}
	return 0
}

// Limits of a table or memory.
type limits struct {
	Min, Max uint32
	HasMax   bool
}

func (r *reader) limits(what string, bound uint64) limits {
	var l limits
	switch flags := r.byte(); flags {
	case 0x00:
		l.Min = r.u32()
	case 0x01:
		l.Min, l.Max, l.HasMax = r.u32(), r.u32(), true
	default:
		r.p--
		r.malformed("%s limits flags 0x%02x: shared memories and 64-bit indices are not supported", what, flags)
	}
	if uint64(l.Min) > bound || (l.HasMax && uint64(l.Max) > bound) {
		r.invalid("%s size must be at most %d", what, bound)
	}
	if l.HasMax && l.Max < l.Min {
		r.invalid("%s minimum %d is larger than its maximum %d", what, l.Min, l.Max)
	}
	return l
}

const (
	maxPages   = 65536 // 4 GiB of memory in 64 KiB pages
	maxTableSz = math.MaxUint32
)
