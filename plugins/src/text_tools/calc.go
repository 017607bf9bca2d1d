package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// CalcInput is the calc arguments.
type CalcInput struct {
	Expression string `json:"expression" jsonschema:"the expression, e.g. (2 + 3) * 4 ^ 2 / sqrt(16) or max(1, 2.5, -3)"`
}

// CalcOutput is the structured result.
type CalcOutput struct {
	Value float64 `json:"value"`
}

func calc(_ context.Context, in CalcInput) (CalcOutput, error) {
	p := &parser{src: in.Expression}
	p.next()
	v, err := p.expr(0)
	if err != nil {
		return CalcOutput{}, err
	}
	if p.tok != "" {
		return CalcOutput{}, p.errorf("unexpected %q", p.tok)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return CalcOutput{}, fmt.Errorf("the result is not a finite number (%v)", v)
	}
	return CalcOutput{Value: v}, nil
}

// parser is a precedence-climbing parser over a token stream.
type parser struct {
	src string
	pos int    // offset after the current token
	at  int    // offset of the current token
	tok string // the current token; "" at the end
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("expression: "+format+" at position %d", append(args, p.at+1)...)
}

func (p *parser) next() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
	p.at = p.pos
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.pos]
	end := p.pos + 1
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for end < len(p.src) && (isDigit(p.src[end]) || p.src[end] == '.') {
			end++
		}
		if end < len(p.src) && (p.src[end] == 'e' || p.src[end] == 'E') {
			e := end + 1
			if e < len(p.src) && (p.src[e] == '+' || p.src[e] == '-') {
				e++
			}
			if e < len(p.src) && isDigit(p.src[e]) {
				for end = e; end < len(p.src) && isDigit(p.src[end]); end++ {
				}
			}
		}
	case c == '_' || unicode.IsLetter(rune(c)):
		for end < len(p.src) && (p.src[end] == '_' || unicode.IsLetter(rune(p.src[end])) || isDigit(p.src[end])) {
			end++
		}
	case c == '*' && end < len(p.src) && p.src[end] == '*':
		end++ // ** is ^
	}
	p.tok = p.src[p.pos:end]
	p.pos = end
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

var precedence = map[string]int{"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "^": 4, "**": 4}

// expr parses operators binding tighter than minPrec; ^ is right-associative
// and binds tighter than unary minus, so -2^2 is -4.
func (p *parser) expr(minPrec int) (float64, error) {
	left, err := p.unary()
	if err != nil {
		return 0, err
	}
	for {
		op := p.tok
		prec, ok := precedence[op]
		if !ok || prec <= minPrec {
			return left, nil
		}
		p.next()
		next := prec
		if op == "^" || op == "**" {
			next = prec - 1
		}
		right, err := p.expr(next)
		if err != nil {
			return 0, err
		}
		switch op {
		case "+":
			left += right
		case "-":
			left -= right
		case "*":
			left *= right
		case "/":
			if right == 0 {
				return 0, fmt.Errorf("expression: division by zero")
			}
			left /= right
		case "%":
			if right == 0 {
				return 0, fmt.Errorf("expression: modulo by zero")
			}
			left = math.Mod(left, right)
		default:
			left = math.Pow(left, right)
		}
	}
}

func (p *parser) unary() (float64, error) {
	switch p.tok {
	case "-":
		p.next()
		v, err := p.expr(3)
		return -v, err
	case "+":
		p.next()
		return p.expr(3)
	}
	return p.primary()
}

var constants = map[string]float64{"pi": math.Pi, "e": math.E}

var functions = map[string]func([]float64) (float64, error){
	"sqrt": one(math.Sqrt), "abs": one(math.Abs), "floor": one(math.Floor), "ceil": one(math.Ceil),
	"round": one(math.Round), "trunc": one(math.Trunc), "exp": one(math.Exp), "ln": one(math.Log),
	"log10": one(math.Log10), "log2": one(math.Log2), "sin": one(math.Sin), "cos": one(math.Cos),
	"tan": one(math.Tan), "asin": one(math.Asin), "acos": one(math.Acos), "atan": one(math.Atan),
	"min": fold(math.Min), "max": fold(math.Max),
}

func one(f func(float64) float64) func([]float64) (float64, error) {
	return func(a []float64) (float64, error) {
		if len(a) != 1 {
			return 0, fmt.Errorf("takes 1 argument, got %d", len(a))
		}
		return f(a[0]), nil
	}
}

func fold(f func(a, b float64) float64) func([]float64) (float64, error) {
	return func(a []float64) (float64, error) {
		if len(a) == 0 {
			return 0, fmt.Errorf("takes at least 1 argument")
		}
		v := a[0]
		for _, x := range a[1:] {
			v = f(v, x)
		}
		return v, nil
	}
}

func (p *parser) primary() (float64, error) {
	tok := p.tok
	switch {
	case tok == "":
		return 0, p.errorf("unexpected end")
	case tok == "(":
		p.next()
		v, err := p.expr(0)
		if err != nil {
			return 0, err
		}
		if p.tok != ")" {
			return 0, p.errorf("missing )")
		}
		p.next()
		return v, nil
	case isDigit(tok[0]) || tok[0] == '.':
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return 0, p.errorf("bad number %q", tok)
		}
		p.next()
		return v, nil
	}
	name := strings.ToLower(tok)
	if c, ok := constants[name]; ok {
		p.next()
		return c, nil
	}
	f, ok := functions[name]
	if !ok {
		return 0, p.errorf("unknown name %q (functions: sqrt, abs, floor, ceil, round, trunc, exp, ln, log10, log2, sin, cos, tan, asin, acos, atan, min, max; constants: pi, e)", tok)
	}
	p.next()
	if p.tok != "(" {
		return 0, p.errorf("%s needs ( after it", name)
	}
	p.next()
	var args []float64
	for p.tok != ")" {
		v, err := p.expr(0)
		if err != nil {
			return 0, err
		}
		args = append(args, v)
		if p.tok == "," {
			p.next()
		} else if p.tok != ")" {
			return 0, p.errorf("want , or ) in the arguments of %s", name)
		}
	}
	p.next()
	v, err := f(args)
	if err != nil {
		return 0, fmt.Errorf("expression: %s %v", name, err)
	}
	return v, nil
}
