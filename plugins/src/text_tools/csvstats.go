package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// CSVInput is the csv_stats arguments.
type CSVInput struct {
	CSV       string `json:"csv" jsonschema:"the CSV text"`
	Delimiter string `json:"delimiter,omitempty" jsonschema:"the field separator, one character (default ,); use \\t for tab-separated data"`
	NoHeader  bool   `json:"no_header,omitempty" jsonschema:"the first row is data, not column names (columns are then named 1, 2, ...)"`
}

// Column is the summary of one column.
type Column struct {
	Name     string   `json:"name"`
	Filled   int      `json:"filled" jsonschema:"non-empty values"`
	Empty    int      `json:"empty" jsonschema:"empty values"`
	Distinct int      `json:"distinct" jsonschema:"different non-empty values"`
	Numeric  int      `json:"numeric" jsonschema:"values that are numbers"`
	Min      *float64 `json:"min,omitempty"`
	Max      *float64 `json:"max,omitempty"`
	Mean     *float64 `json:"mean,omitempty"`
	Sum      *float64 `json:"sum,omitempty"`
}

// CSVOutput is the structured result.
type CSVOutput struct {
	Rows    int      `json:"rows" jsonschema:"data rows, the header not counted"`
	Columns []Column `json:"columns"`
}

func csvStats(_ context.Context, in CSVInput) (pdk.Result, error) {
	r := csv.NewReader(strings.NewReader(in.CSV))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	switch d := in.Delimiter; {
	case d == "" || d == ",":
	case d == `\t` || d == "\t":
		r.Comma = '\t'
	case utf8.RuneCountInString(d) == 1:
		r.Comma, _ = utf8.DecodeRuneInString(d)
	default:
		return pdk.Result{}, fmt.Errorf("delimiter must be one character, got %q", d)
	}
	var (
		out      CSVOutput
		distinct []map[string]bool
		sums     []float64
	)
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return pdk.Result{}, fmt.Errorf("csv: %v", err)
		}
		if line == 1 && !in.NoHeader {
			for _, name := range rec {
				out.Columns = append(out.Columns, Column{Name: name})
				distinct = append(distinct, map[string]bool{})
				sums = append(sums, 0)
			}
			continue
		}
		for len(out.Columns) < len(rec) {
			out.Columns = append(out.Columns, Column{Name: strconv.Itoa(len(out.Columns) + 1)})
			distinct = append(distinct, map[string]bool{})
			sums = append(sums, 0)
		}
		out.Rows++
		for i := range out.Columns {
			c := &out.Columns[i]
			v := ""
			if i < len(rec) {
				v = strings.TrimSpace(rec[i])
			}
			if v == "" {
				c.Empty++
				continue
			}
			c.Filled++
			if len(distinct[i]) <= 100000 {
				distinct[i][v] = true
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			c.Numeric++
			sums[i] += n
			if c.Min == nil || n < *c.Min {
				c.Min = ptr(n)
			}
			if c.Max == nil || n > *c.Max {
				c.Max = ptr(n)
			}
		}
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%d rows, %d columns\n", out.Rows, len(out.Columns))
	for i := range out.Columns {
		c := &out.Columns[i]
		c.Distinct = len(distinct[i])
		fmt.Fprintf(&text, "%s: %d filled, %d empty, %d distinct", c.Name, c.Filled, c.Empty, c.Distinct)
		if c.Numeric > 0 {
			c.Sum, c.Mean = ptr(sums[i]), ptr(sums[i]/float64(c.Numeric))
			fmt.Fprintf(&text, ", %d numeric: min %g, max %g, mean %g, sum %g", c.Numeric, *c.Min, *c.Max, *c.Mean, *c.Sum)
		}
		text.WriteByte('\n')
	}
	if out.Columns == nil {
		out.Columns = []Column{}
	}
	res, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	res.Content = []pdk.Content{{Type: "text", Text: text.String()}}
	return res, nil
}

func ptr(f float64) *float64 { return &f }
