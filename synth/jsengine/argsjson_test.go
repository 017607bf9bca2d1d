package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// encodeBoth makes the value of the JavaScript expression expr twice, in
// two runtimes, and encodes it with JSON.stringify in one and argsJSON in
// the other. It returns what each gave: the text (or undefined, or the
// exception) followed by what the expression's code logged (getters,
// toJSON, proxy traps push to log).
func encodeBoth(t testing.TB, expr string) (want, got string) {
	t.Helper()
	setup := "var log = []; function mk() { return (" + expr + "\n) }"
	a := goja.New()
	if _, err := a.RunString(setup); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	w, err := a.RunString(`(() => { let out; try { const r = JSON.stringify(mk()); out = r === undefined ? "undefined" : "text " + r } catch (e) { out = "throw " + e } return out + " log " + JSON.stringify(log) })()`)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	b := goja.New()
	if _, err := b.RunString(setup); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	v, err := b.RunString("mk()")
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	enc, err := newArgsEncoder(b)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if ex := b.Try(func() {
		if text, ok := enc.encode(v); ok {
			out = "text " + string(text)
		} else {
			out = "undefined"
		}
	}); ex != nil {
		out = "throw " + ex.Value().String()
	}
	l, err := b.RunString("JSON.stringify(log)")
	if err != nil {
		t.Fatal(err)
	}
	return w.String(), out + " log " + l.String()
}

// argsCorpus is values of every kind JSON.stringify treats apart.
var argsCorpus = []string{
	`{id: 7}`, `{}`, `[]`, `{a: {b: {c: [1, 2, {d: null}]}}}`,
	`{s: "quote \" backslash \\ nl \n tab \t ctl \u0001 \u001f del \u007f é 😀 \u2028"}`,
	`{lone: "\ud800", low: "\udc00x", pair: "\ud83d\ude00"}`,
	`{a: 0, b: 7, c: 99, d: 100, e: -101, f: 65535, g: 2**31, h: -(2**53), i: 9007199254740991, j: 1e15, k: -1}`,
	`{n: -0, a: 1e21, b: 1e-7, c: 0.1, d: 123456789012345680000, e: NaN, f: Infinity, g: -Infinity, h: 2**53}`,
	`{t: true, f: false, n: null, u: undefined, fn() {}, s: Symbol("x")}`,
	`[undefined, function () {}, Symbol("y"), null]`,
	`{2: "two", 1: "one", b: "b", a: "a", "-1": "neg", "01": "lead"}`,
	`{["__proto__"]: {x: 1}}`, `JSON.parse('{"__proto__": 1}')`,
	`Object.create(null)`, `Object.assign(Object.create(null), {z: 1})`,
	`Object.create({inherited: 1}, {own: {value: 2, enumerable: true}, hidden: {value: 3}})`,
	`[1, , 3]`, `Object.assign([1, 2], {extra: 3})`, `new Array(3)`,
	`{get g() { log.push("get g"); return 1 }, after: 2}`,
	`{a: 1, get b() { log.push("b"); delete this.c; return 2 }, c: 3}`,
	`{toJSON(k) { log.push("toJSON " + JSON.stringify(k)); return {id: 9} }}`,
	`{inner: {toJSON(k) { log.push("inner " + k); return undefined }}, x: 1}`,
	`{toJSON() { return undefined }}`, `{toJSON() { return null }}`, `{toJSON() { return "s" }}`,
	`{toJSON() { return () => 1 }}`, `{toJSON: 5}`,
	`(() => { const f = () => 1; f.toJSON = () => ({fn: true}); return f })()`,
	`() => 1`, `Symbol("top")`, `undefined`, `null`, `"a string"`, `42`, `true`,
	`new Date(0)`, `{d: new Date(86400000)}`, `new Error("e")`, `/re/g`, `new Map([[1, 2]])`, `new Set([1])`,
	`new Number(5)`, `new String("boxed")`, `new Boolean(false)`, `Object(Symbol("boxed"))`,
	`{big: 10n}`, `10n`, `Object(10n)`,
	`(() => { BigInt.prototype.toJSON = function () { log.push("big"); return String(this) }; return {b: 3n} })()`,
	`(() => { Object.defineProperty(BigInt.prototype, "toJSON", {get() { "use strict"; log.push(typeof this); return undefined }, configurable: true}); return {b: 3n} })()`,
	`(() => { const o = {}; o.self = o; return o })()`,
	`(() => { const a = [1]; a.push({back: a}); return a })()`,
	`(() => { const o = {x: 1}; return {a: o, b: o} })()`,
	`(() => { const o = {get x() { log.push("x"); return 1 }}; o.self = o; return o })()`,
	`new Proxy({a: 1, b: 2}, {get(t, k) { log.push("get " + String(k)); return t[k] }, ownKeys(t) { log.push("keys"); return Reflect.ownKeys(t) }, getOwnPropertyDescriptor(t, k) { log.push("gopd " + k); return Reflect.getOwnPropertyDescriptor(t, k) }})`,
	`{p: new Proxy([1, 2], {get(t, k) { log.push("aget " + String(k)); return t[k] }})}`,
	`new Proxy({"\ud800": 1, b: 2}, {ownKeys(t) { log.push("keys"); return Reflect.ownKeys(t) }, get(t, k) { log.push("get"); return t[k] }})`,
	`(() => { const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); return {p: proxy} })()`,
	`new Proxy(function () {}, {})`,
	`(() => { Object.prototype.toJSON = function (k) { log.push("proto " + k); return 1 }; return {a: {b: 2}} })()`,
	`(() => { Object.defineProperty(Object.prototype, "toJSON", {get() { log.push("getter toJSON"); return undefined }, configurable: true}); return {a: [1]} })()`,
	`(() => { Array.prototype[1] = "from proto"; return [0, , 2] })()`,
	`(() => { class C { constructor() { this.x = 1 } get y() { return 2 } } return new C() })()`,
	`{a: {get b() { throw new Error("from getter") }}}`,
	`{toJSON() { throw new TypeError("from toJSON") }}`,
	`new Uint8Array([1, 2])`, `(function () { return arguments })(1, 2)`,
	`JSON.rawJSON("123")`, `{raw: JSON.rawJSON('"x"')}`,
	`{[Symbol("k")]: 1, v: 2}`,
	`Object.defineProperty({a: 1}, "hidden", {value: 2, enumerable: false})`,
	`{"": "empty key", " ": "space"}`,
	`Number.prototype`, `String.prototype`, `Boolean.prototype`, `{s: String.prototype, n: Number.prototype, b: Boolean.prototype}`,
	`{s: Object(Symbol("w")), b: Object(false), n: Object(-0), str: Object("x")}`,
	`(() => { Number.prototype.valueOf = function () { log.push("valueOf"); return 3 }; return [new Number(1)] })()`,
	`(() => { String.prototype.toString = function () { log.push("toString"); return "t" }; return [new String("s")] })()`,
	`{"\ud800\udc00": 1, "\udfff": 2, "é\ud800": {get "\ud801"() { log.push("lone getter"); return 3 }}, "\ufffd": 4}`,
	`{a: 1, [Symbol.toPrimitive]: 2, 10: "ten", 9: "nine"}`,
	`(() => { const o = {toJSON(k) { log.push(typeof this + k); return [this === o] }}; return [o, {o}] })()`,
	`(() => { const p = new Proxy({}, {get(t, k) { log.push("toJSON? " + String(k)); return k === "toJSON" ? () => "via proxy" : undefined }}); return {p} })()`,
}

// argsJSON gives what JSON.stringify gives, and runs what it runs
// (getters, toJSON, traps) in the same order, for every kind of value.
func TestArgsJSONIsStringify(t *testing.T) {
	for _, expr := range argsCorpus {
		want, got := encodeBoth(t, expr)
		if want != got {
			t.Errorf("%s:\nJSON.stringify: %s\nargsJSON:       %s", expr, want, got)
		}
	}
}

// FuzzArgsJSON builds a value from the input (strings, numbers, nesting,
// getters, toJSON, cycles) and compares argsJSON with JSON.stringify.
func FuzzArgsJSON(f *testing.F) {
	for _, s := range []string{"", "a\x00b", "\xff\xfe{[1,2]}", "key\u2028", "0123456789", "\x01\x02\x03\x04\x05\x06\x07\x08\x09"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			data = data[:64]
		}
		expr := fuzzValue(&data, 0)
		want, got := encodeBoth(t, expr)
		if want != got {
			t.Fatalf("%s:\nJSON.stringify: %s\nargsJSON:       %s", expr, want, got)
		}
	})
}

// fuzzValue reads a JavaScript expression off data, one production per
// byte.
func fuzzValue(data *[]byte, depth int) string {
	next := func() byte {
		if len(*data) == 0 {
			return 0
		}
		b := (*data)[0]
		*data = (*data)[1:]
		return b
	}
	str := func() string {
		n := int(next() % 6)
		var s []rune
		for range n {
			s = append(s, rune(next())|rune(next())<<8)
		}
		return strconv.QuoteToASCII(string(s))
	}
	b := next()
	if depth > 4 {
		b %= 6
	}
	switch b % 12 {
	case 0:
		return "null"
	case 1:
		return fmt.Sprint(b%2 == 0)
	case 2:
		return str()
	case 3:
		return strconv.Itoa(int(int8(next()))) + "e" + strconv.Itoa(int(int8(next()))%30)
	case 4:
		return []string{"NaN", "-0", "Infinity", "undefined", "0.1", "1/3"}[next()%6]
	case 5:
		return "String.fromCharCode(" + strconv.Itoa(int(next())|int(next())<<8) + ")"
	case 6, 7:
		n := int(next() % 4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "[" + str() + "]: " + fuzzValue(data, depth+1)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case 8:
		n := int(next() % 4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fuzzValue(data, depth+1)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case 9:
		return "{get [" + str() + "]() { log.push(1); return " + fuzzValue(data, depth+1) + " }}"
	case 10:
		return "{toJSON(k) { log.push(k); return " + fuzzValue(data, depth+1) + " }}"
	default:
		return "(() => { const o = " + fuzzValue(data, depth+1) + "; if (o && typeof o === 'object') o.c = o; return o })()"
	}
}

func BenchmarkArgsJSON(b *testing.B) {
	vm := goja.New()
	v, err := vm.RunString("({id: 7})")
	if err != nil {
		b.Fatal(err)
	}
	j, err := originalJSON(vm)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("stringify", func(b *testing.B) {
		for b.Loop() {
			s, err := j.stringify(goja.Undefined(), v)
			if err != nil {
				b.Fatal(err)
			}
			_ = s.String()
		}
	})
	enc, err := newArgsEncoder(vm)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("argsEncoder", func(b *testing.B) {
		for b.Loop() {
			if _, ok := enc.encode(v); !ok {
				b.Fatal("undefined")
			}
		}
	})
}

// A getter of the arguments may call a tool while they are being encoded:
// each call's arguments are encoded whole, neither overwriting the other.
func TestArgsJSONReentrant(t *testing.T) {
	o := &orders{}
	out, err := runProgram(program(`
const args = {a: "the outer call's first member", get id() { tools.note({inner: "the inner call's own arguments"}); return 5 }, z: [1, 2]}
return (await tools.get_order(args)).refund`, "get_order", "note"), o.call)
	if err != nil || string(out) != `{"result":50}` {
		t.Fatalf("out %s err %v", out, err)
	}
	want := []string{`note {"inner":"the inner call's own arguments"}`, `get_order {"a":"the outer call's first member","id":5,"z":[1,2]}`}
	if strings.Join(o.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %q, want %q", o.calls, want)
	}
}
