package metrics

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// BLEUScore is corpus BLEU with its parts, as sacreBLEU reports them.
type BLEUScore struct {
	Score      float64    // 0..100
	Precisions [4]float64 // n-gram precisions in percent, after smoothing
	Counts     [4]int     // matching n-grams (clipped by the references)
	Totals     [4]int     // n-grams in the hypotheses
	BP         float64    // brevity penalty
	SysLen     int        // hypothesis tokens
	RefLen     int        // reference tokens, the closest reference's per sentence
}

// BLEU is corpus-level BLEU-4 as sacreBLEU's corpus_bleu computes it with
// its defaults (Post 2018, "A Call for Clarity in Reporting BLEU Scores"):
// each hypothesis and reference is tokenised by Tokenize13a (the WMT
// mteval-v13a rules; already-tokenised text passes through it too, as it
// does in sacreBLEU), n-grams of orders 1-4 are counted over the whole
// corpus with each hypothesis n-gram clipped by its largest count in any
// one reference, the brevity penalty uses per sentence the reference
// length closest to the hypothesis (the shorter on a tie), and a zero
// n-gram count is smoothed by the "exp" method (the k-th zero precision
// becomes 100/(2^k · total)). refs[i] holds the references of hyps[i]
// (one or more; sacreBLEU takes them transposed, one stream per
// reference).
func BLEU(hyps []string, refs [][]string) (BLEUScore, error) {
	var s BLEUScore
	if len(hyps) != len(refs) || len(hyps) == 0 {
		return s, fmt.Errorf("metrics: BLEU: %d hypotheses and %d reference sets; want the same number, at least 1", len(hyps), len(refs))
	}
	for i, h := range hyps {
		if len(refs[i]) == 0 {
			return s, fmt.Errorf("metrics: BLEU: hypothesis %d has no reference", i)
		}
		ht := strings.Fields(Tokenize13a(h))
		best := map[string]int{} // per n-gram, its largest count in one reference
		refLen, diff := -1, -1
		for _, r := range refs[i] {
			rt := strings.Fields(Tokenize13a(r))
			for g, c := range ngrams(rt) {
				best[g] = max(best[g], c)
			}
			d := abs(len(ht) - len(rt))
			if diff < 0 || d < diff || (d == diff && len(rt) < refLen) {
				diff, refLen = d, len(rt)
			}
		}
		s.SysLen += len(ht)
		s.RefLen += refLen
		for g, c := range ngrams(ht) {
			n := strings.Count(g, " ")
			s.Totals[n] += c
			s.Counts[n] += min(c, best[g])
		}
	}
	s.BP = 1
	if s.SysLen < s.RefLen {
		s.BP = 0
		if s.SysLen > 0 {
			s.BP = math.Exp(1 - float64(s.RefLen)/float64(s.SysLen))
		}
	}
	if s.Counts == [4]int{} {
		return s, nil
	}
	smooth := 1.0
	logSum := 0.0
	for n := range 4 {
		switch {
		case s.Totals[n] == 0: // shorter than n everywhere: sacreBLEU stops, leaving precision 0
		case s.Counts[n] == 0:
			smooth *= 2
			s.Precisions[n] = 100 / (smooth * float64(s.Totals[n]))
		default:
			s.Precisions[n] = 100 * float64(s.Counts[n]) / float64(s.Totals[n])
		}
		if s.Precisions[n] == 0 {
			return s, nil // log 0: the score is 0
		}
		logSum += math.Log(s.Precisions[n])
	}
	s.Score = s.BP * math.Exp(logSum/4)
	return s, nil
}

// ngrams counts the n-grams of orders 1-4 of tokens, each joined by spaces
// (tokens hold none after Fields).
func ngrams(tokens []string) map[string]int {
	out := map[string]int{}
	for n := 1; n <= 4; n++ {
		for i := 0; i+n <= len(tokens); i++ {
			out[strings.Join(tokens[i:i+n], " ")]++
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// The mteval-v13a tokenisation rules, in order: punctuation and symbols
// apart; a period or comma apart unless it sits before (or after) a digit;
// a hyphen after a digit apart.
var tok13a = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile("([{-~\\[-` -&(-+:-@/])"), " $1 "},
	{regexp.MustCompile(`([^0-9])([.,])`), "$1 $2 "},
	{regexp.MustCompile(`([.,])([^0-9])`), " $1 $2"},
	{regexp.MustCompile(`([0-9])(-)`), "$1 $2 "},
}

// Tokenize13a is the tokeniser of WMT's mteval-v13a.pl, sacreBLEU's
// default: it drops "<skipped>" and hyphenated line breaks, unescapes
// &quot; &amp; &lt; &gt;, splits punctuation and symbols off, and
// returns the tokens joined by single spaces.
func Tokenize13a(line string) string {
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		for _, e := range [][2]string{{"&quot;", `"`}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}} {
			line = strings.ReplaceAll(line, e[0], e[1]) // in turn, as mteval: "&amp;lt;" becomes "<"
		}
	}
	line = " " + line + " "
	for _, r := range tok13a {
		line = r.re.ReplaceAllString(line, r.with)
	}
	return strings.Join(strings.Fields(line), " ")
}
