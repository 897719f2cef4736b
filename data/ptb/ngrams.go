package ptb

// NGrams returns every window of n consecutive ids of seq, in order (none
// when seq is shorter than n or n < 1). Each window is a fresh slice.
func NGrams(seq []int64, n int) [][]int64 {
	if n < 1 || len(seq) < n {
		return nil
	}
	out := make([][]int64, 0, len(seq)-n+1)
	for i := n; i <= len(seq); i++ {
		out = append(out, append([]int64(nil), seq[i-n:i]...))
	}
	return out
}
