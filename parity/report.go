// Package parity checks Plumb's ops and optimizers against goldens recorded
// from TensorFlow.
//
// The goldens live in testdata/<op>/<case>/ (see docs/parity.md and the
// recorder, parity/record/record.py): a case.json with the op's attributes,
// dtype, seed and tolerance class, and .npy files for the inputs, the
// output, the upstream gradient and every input gradient. CheckCase runs
// one case through the public ops and optim APIs and compares every
// tensor; Run does so for a whole testdata tree and folds the results
// into one Row per op and dtype, which FormatTable prints. `go test
// ./parity/...` runs every case as a subtest and prints the table; `plumb
// parity` prints the same table.
package parity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
)

// Row summarises one op in one dtype: how many cases ran, the largest
// absolute and relative errors over all their tensors, the bound they were
// held to and whether every case passed. Failures lists the failed cases'
// messages. TruthCases counts the cases held to the float64 truth, and
// PlumbErr and TFErr are Plumb's and TF's largest absolute errors against
// the truth over those cases.
type Row struct {
	Op              string
	DType           string
	Cases           int
	MaxAbs          float64
	MaxRel          float64
	Bound           string
	Pass            bool
	Failures        []string
	TruthCases      int
	PlumbErr, TFErr float64
}

// Run checks every case under dir (a testdata tree) and returns one Row
// per op and dtype, sorted by op and dtype. The error is for a tree that
// cannot be read; failing cases are reported in the rows.
func Run(dir string) ([]Row, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("parity: the testdata folder %s is not a directory (run from the repository root, or pass --dir)", abs)
	}
	cases, err := LoadCases(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, abs)
	}
	results := make([]CaseResult, len(cases))
	for i, c := range cases {
		results[i] = CheckCase(c)
	}
	return Rows(results), nil
}

// Rows folds case results into one Row per op and dtype.
func Rows(results []CaseResult) []Row {
	byKey := map[[2]string]*Row{}
	bounds := map[[2]string]map[string]bool{}
	for _, r := range results {
		var k [2]string // a result without a case (CheckCase(nil)) gets a row of its own
		if r.Case != nil {
			k = [2]string{r.Case.Op, r.Case.DType}
		}
		row := byKey[k]
		if row == nil {
			row = &Row{Op: k[0], DType: k[1], Pass: true}
			byKey[k] = row
			bounds[k] = map[string]bool{}
		}
		row.Cases++
		row.MaxAbs = math.Max(row.MaxAbs, r.MaxAbs)
		row.MaxRel = math.Max(row.MaxRel, r.MaxRel)
		if r.Err == nil {
			b := r.Tol.String()
			if r.Truth {
				b = fmt.Sprintf("max(%s, %.1f×TF err)", b, truthFactor)
				row.TruthCases++
				row.PlumbErr = math.Max(row.PlumbErr, r.PlumbErr)
				row.TFErr = math.Max(row.TFErr, r.TFErr)
			}
			bounds[k][b] = true
		}
		if r.Failed() {
			row.Pass = false
			row.Failures = append(row.Failures, r.Message())
		}
	}
	rows := make([]Row, 0, len(byKey))
	for k, row := range byKey {
		bs := make([]string, 0, len(bounds[k]))
		for b := range bounds[k] {
			bs = append(bs, b)
		}
		sort.Strings(bs)
		row.Bound = strings.Join(bs, "; ")
		rows = append(rows, *row)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Op != rows[j].Op {
			return rows[i].Op < rows[j].Op
		}
		return rows[i].DType < rows[j].DType
	})
	return rows
}

// FormatTable renders rows as an aligned text table with a summary line.
// MAX ABS ERR and MAX REL ERR are Plumb's errors against TF's goldens;
// PLUMB VS F64 and TF VS F64 are Plumb's and TF's largest absolute errors
// against the float64 truth (a dash for a row with no such case, and the
// count of such cases when not all of the row's have one).
func FormatTable(rows []Row) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "OP\tDTYPE\tCASES\tMAX ABS ERR\tMAX REL ERR\tPLUMB VS F64\tTF VS F64\tBOUND\tRESULT")
	cases, failed, truth := 0, 0, 0
	for _, r := range rows {
		res := "pass"
		if !r.Pass {
			res = "FAIL"
			failed++
		}
		cases += r.Cases
		truth += r.TruthCases
		pe, te := "-", "-"
		if r.TruthCases > 0 {
			pe, te = fmt.Sprintf("%.2e", r.PlumbErr), fmt.Sprintf("%.2e", r.TFErr)
			if r.TruthCases < r.Cases {
				te += fmt.Sprintf(" (%d cases)", r.TruthCases)
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%.2e\t%.2e\t%s\t%s\t%s\t%s\n", r.Op, r.DType, r.Cases, r.MaxAbs, r.MaxRel, pe, te, r.Bound, res)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d cases in %d op/dtype rows (%d held to the float64 truth); %d rows failed\n", cases, len(rows), truth, failed)
	return b.String()
}
