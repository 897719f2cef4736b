// Package bench holds side-by-side benchmarks (Plumb against the Go
// alternatives in its tests, scripts for TensorFlow and PyTorch) and the
// KPI file, bench/kpi.json, which it embeds so that plumb kpi checks
// against it wherever the binary runs.
package bench

import _ "embed" // the KPI file

// KPIFile is bench/kpi.json as the binary was built with it: the KPIs
// plumb kpi checks by default (package bench/kpi reads it).
//
//go:embed kpi.json
var KPIFile []byte

// KPIFileName names KPIFile in errors and reports.
const KPIFileName = "bench/kpi.json (embedded)"
