package parity_test

import (
	"fmt"
	"os"

	"github.com/plumbml/plumb/parity"
)

// Check Plumb's relu against its TensorFlow goldens: load the recorded
// cases, run those of one op, and fold the results into the table that
// `plumb parity` prints for every op.
func ExampleCheckCase() {
	cases, err := parity.LoadCases(os.DirFS("testdata"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var results []parity.CaseResult
	for _, c := range cases {
		if c.Op == "relu" {
			r := parity.CheckCase(c)
			fmt.Printf("%s %s within %v: %v\n", c.ID(), c.DType, r.Tol, !r.Failed())
			results = append(results, r)
		}
	}
	for _, row := range parity.Rows(results) {
		fmt.Println(row.Op, row.DType, row.Cases, "cases, pass:", row.Pass)
	}
	// Output:
	// relu/r2_f32 float32 within atol 1e-06 + rtol 1e-05: true
	// relu/r2_f64 float64 within rtol 1e-10: true
	// relu/r3_f32 float32 within atol 1e-06 + rtol 1e-05: true
	// relu/r3_f64 float64 within rtol 1e-10: true
	// relu/vec_f32 float32 within atol 1e-06 + rtol 1e-05: true
	// relu/vec_f64 float64 within rtol 1e-10: true
	// relu float32 3 cases, pass: true
	// relu float64 3 cases, pass: true
}

// A tolerance class bounds each element's error by ATol + RTol·|want|.
func ExampleTolerance() {
	tol := parity.Tolerance{RTol: 1e-5, ATol: 1e-6}
	want, got := 2.0, 2.000015
	fmt.Printf("%v: bound %.1e at %v, pass %v\n", tol, tol.Bound(want), want, got-want <= tol.Bound(want))
	// Output: atol 1e-06 + rtol 1e-05: bound 2.1e-05 at 2, pass true
}
