package movielens

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/tensor"
)

// Set holds the ratings and the user and movie features of a
// MovieLens set (GroupLens): 100K's u.data/u.user/u.item or 1M's
// ratings.dat/users.dat/movies.dat.
type Set struct {
	Ratings []Rating
	Users   map[int]User
	Movies  map[int]Movie
	Genres  []string // genre id to name: u.genre's order (100K), sorted names (1M)
	Jobs    []string // occupation id to name (100K: u.occupation's order); nil for 1M, whose codes 0..20 its README lists
}

// Rating is one user's rating of one movie.
type Rating struct {
	User, Movie int
	Score       float32 // 1..5 stars (Paddle's 1M reader feeds Score*2-5)
	Time        int64   // seconds since 1970
}

// User holds a user's features.
type User struct {
	ID     int
	Female bool
	Age    int // years (100K) or 1M's age code (1, 18, 25, 35, 45, 50, 56)
	Group  int // age group 0..6: under 18, 18-24, 25-34, 35-44, 45-49, 50-55, 56+ (1M's codes in order, Paddle's age index)
	Job    int // occupation id
	Zip    string
}

// Movie holds a movie's features.
type Movie struct {
	ID     int
	Title  string // without the trailing "(year)"
	Year   int    // 0 when the title carries none
	Genres []int  // genre ids
}

// ageCodes are 1M's age codes, the lower ends of the groups.
var ageCodes = []int{1, 18, 25, 35, 45, 50, 56}

// ageGroup maps an age in years to its 1M group.
func ageGroup(age int) int {
	g := 0
	for i, c := range ageCodes {
		if age >= c {
			g = i
		}
	}
	return g
}

var (
	ml100KFiles = []string{"u.data", "u.user", "u.item", "u.genre", "u.occupation"}
	ml1MFiles   = []string{"ratings.dat", "users.dat", "movies.dat"}
	titleYear   = regexp.MustCompile(`^(.*)\((\d+)\)$`)
)

// Load100K reads MovieLens 100K from src: the ml-100k folder, a
// folder holding it (or ml-100k.tar.gz, ml-100k.zip, or those under
// movielens/), or the archive itself. It reads u.data (user, item, rating,
// time, tab-separated), u.user (id|age|gender|occupation|zip), u.item
// (id|title|dates|url|19 genre flags, Latin-1), u.genre and u.occupation.
// Every rating must name a known user and movie. It reads within
// data.DefaultLimits (see Load100KLimits).
func Load100K(src string) (*Set, error) {
	return Load100KLimits(src, data.Limits{})
}

// Load100KLimits is Load100K within lim: an archive may expand at most
// lim.MaxRatio times, a file hold lim.MaxFileBytes bytes (checked from
// an archive member's header before it is read), all files
// lim.MaxTotalBytes, a line lim.MaxLineBytes, and a file at most
// lim.MaxRecords lines.
func Load100KLimits(src string, lim data.Limits) (*Set, error) {
	files, err := collectFiles(src, "ml-100k", ml100KFiles, lim)
	if err != nil {
		return nil, fmt.Errorf("movielens: %w", err)
	}
	return parseMovieLens100K(files, src, lim)
}

// Load1M reads MovieLens 1M from src (the ml-1m folder, a folder
// holding it or ml-1m.zip, or the zip itself): ratings.dat
// (UserID::MovieID::Rating::Timestamp), users.dat
// (UserID::Gender::Age::Occupation::Zip) and movies.dat
// (MovieID::Title::Genre|Genre..., Latin-1), as Paddle's movielens reader.
// Each record must have exactly its fields (Paddle's unpacking fails on
// more): a line with an extra "::" is an error naming the file and line.
// It reads within data.DefaultLimits (see Load1MLimits).
func Load1M(src string) (*Set, error) {
	return Load1MLimits(src, data.Limits{})
}

// Load1MLimits is Load1M within lim (see Load100KLimits).
func Load1MLimits(src string, lim data.Limits) (*Set, error) {
	files, err := collectFiles(src, "ml-1m", ml1MFiles, lim)
	if err != nil {
		return nil, fmt.Errorf("movielens: %w", err)
	}
	return parseMovieLens1M(files, src, lim)
}

// collectFiles reads the files with the given base names from src (see
// Load100K for where it looks).
func collectFiles(src, set string, bases []string, lim data.Limits) (map[string][]byte, error) {
	if fileio.IsDir(src) {
		if p, err := fileio.FindPath(src, set, set+".tar.gz", set+".zip", "movielens/"+set, "movielens/"+set+".tar.gz", "movielens/"+set+".zip"); err == nil {
			src = p
		}
	}
	files := map[string][]byte{}
	err := fileio.WalkTree(src, lim, func(name string) bool { return slices.Contains(bases, path.Base(name)) }, func(name string, _ int64, r io.Reader) error {
		b, err := io.ReadAll(r)
		files[path.Base(name)] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, b := range bases[:3] {
		if _, ok := files[b]; !ok {
			return nil, fmt.Errorf("no %s in %s", b, src)
		}
	}
	return files, nil
}

// latin1 decodes ISO-8859-1 bytes: each byte is the code point of that value.
func latin1(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteRune(rune(c))
	}
	return s.String()
}

// eachRecord splits every non-empty line of file into fields at sep,
// requiring at least want fields (exactly want when exact), and calls fn
// with them.
func eachRecord(files map[string][]byte, file, src, sep string, want int, exact bool, lim data.Limits, fn func(line int, f []string) error) error {
	name := src + ":" + file
	return fileio.EachLine(bytes.NewReader(files[file]), name, lim, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		f := strings.Split(latin1([]byte(line)), sep)
		if len(f) < want || exact && len(f) > want {
			return fmt.Errorf("movielens: %s line %d has %d %q-separated fields, want %d", name, n, len(f), sep, want)
		}
		if err := fn(n, f); err != nil {
			return fmt.Errorf("movielens: %s line %d: %w", name, n, err)
		}
		return nil
	})
}

// atoi parses a field that must be an integer in [lo, hi].
func atoi(what, s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q: want an integer in [%d, %d]", what, s, lo, hi)
	}
	return v, nil
}

const maxID = 1 << 30

func parseMovieLens100K(files map[string][]byte, src string, lim data.Limits) (*Set, error) {
	ml := &Set{Users: map[int]User{}, Movies: map[int]Movie{}}
	names := func(file string) ([]string, error) {
		var out []string
		err := eachRecord(files, file, src, "|", 1, false, lim, func(_ int, f []string) error {
			out = append(out, f[0])
			return nil
		})
		return out, err
	}
	var err error
	if ml.Genres, err = names("u.genre"); err != nil {
		return nil, err
	}
	if ml.Jobs, err = names("u.occupation"); err != nil {
		return nil, err
	}
	err = eachRecord(files, "u.user", src, "|", 5, false, lim, func(_ int, f []string) error {
		id, err := atoi("user id", f[0], 1, maxID)
		if err != nil {
			return err
		}
		age, err := atoi("age", f[1], 0, 200)
		if err != nil {
			return err
		}
		if f[2] != "M" && f[2] != "F" {
			return fmt.Errorf("gender %q: want M or F", f[2])
		}
		job := slices.Index(ml.Jobs, f[3])
		if job < 0 {
			job, ml.Jobs = len(ml.Jobs), append(ml.Jobs, f[3]) // u.occupation absent or incomplete
		}
		ml.Users[id] = User{ID: id, Female: f[2] == "F", Age: age, Group: ageGroup(age), Job: job, Zip: f[4]}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRecord(files, "u.item", src, "|", 6, false, lim, func(_ int, f []string) error {
		id, err := atoi("movie id", f[0], 1, maxID)
		if err != nil {
			return err
		}
		m := movieTitle(id, f[1])
		for g, flag := range f[5:] {
			switch strings.TrimSpace(flag) {
			case "1":
				m.Genres = append(m.Genres, g)
			case "0":
			default:
				return fmt.Errorf("genre flag %d is %q: want 0 or 1", g, flag)
			}
		}
		if len(ml.Genres) > 0 && len(f[5:]) != len(ml.Genres) {
			return fmt.Errorf("%d genre flags but u.genre names %d genres", len(f[5:]), len(ml.Genres))
		}
		ml.Movies[id] = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRecord(files, "u.data", src, "\t", 4, false, lim, func(_ int, f []string) error {
		return ml.addRating(f)
	})
	return ml, err
}

func parseMovieLens1M(files map[string][]byte, src string, lim data.Limits) (*Set, error) {
	ml := &Set{Users: map[int]User{}, Movies: map[int]Movie{}}
	err := eachRecord(files, "users.dat", src, "::", 5, true, lim, func(_ int, f []string) error {
		id, err := atoi("user id", f[0], 1, maxID)
		if err != nil {
			return err
		}
		if f[1] != "M" && f[1] != "F" {
			return fmt.Errorf("gender %q: want M or F", f[1])
		}
		age, err := atoi("age code", f[2], 1, 56)
		if err != nil {
			return err
		}
		group := slices.Index(ageCodes, age)
		if group < 0 {
			return fmt.Errorf("age code %d: want one of %v", age, ageCodes)
		}
		job, err := atoi("occupation", f[3], 0, 20)
		if err != nil {
			return err
		}
		ml.Users[id] = User{ID: id, Female: f[1] == "F", Age: age, Group: group, Job: job, Zip: f[4]}
		return nil
	})
	if err != nil {
		return nil, err
	}
	movieGenres := map[int][]string{}
	err = eachRecord(files, "movies.dat", src, "::", 3, true, lim, func(_ int, f []string) error {
		id, err := atoi("movie id", f[0], 1, maxID)
		if err != nil {
			return err
		}
		ml.Movies[id] = movieTitle(id, f[1])
		movieGenres[id] = strings.Split(strings.TrimSpace(f[2]), "|")
		for _, g := range movieGenres[id] {
			if !slices.Contains(ml.Genres, g) {
				ml.Genres = append(ml.Genres, g)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ml.Genres)
	for id, gs := range movieGenres {
		m := ml.Movies[id]
		for _, g := range gs {
			m.Genres = append(m.Genres, slices.Index(ml.Genres, g))
		}
		slices.Sort(m.Genres)
		ml.Movies[id] = m
	}
	err = eachRecord(files, "ratings.dat", src, "::", 4, true, lim, func(_ int, f []string) error {
		return ml.addRating(f)
	})
	return ml, err
}

// movieTitle splits "Title (1995)" into the title and the year, as
// Paddle's pattern ^(.*)\((\d+)\)$ does (after trimming spaces).
func movieTitle(id int, raw string) Movie {
	raw = strings.TrimSpace(raw)
	m := Movie{ID: id, Title: raw}
	if sub := titleYear.FindStringSubmatch(raw); sub != nil {
		m.Title = strings.TrimSpace(sub[1])
		m.Year, _ = strconv.Atoi(sub[2]) // digits only; an absurd year just reads as 0
	}
	return m
}

// addRating parses user, movie, rating, time and checks the references.
func (ml *Set) addRating(f []string) error {
	user, err := atoi("user id", f[0], 1, maxID)
	if err != nil {
		return err
	}
	movie, err := atoi("movie id", f[1], 1, maxID)
	if err != nil {
		return err
	}
	score, err := atoi("rating", f[2], 1, 5)
	if err != nil {
		return err
	}
	t, err := strconv.ParseInt(strings.TrimSpace(f[3]), 10, 64)
	if err != nil || t < 0 {
		return fmt.Errorf("timestamp %q: want a non-negative integer", f[3])
	}
	if _, ok := ml.Users[user]; !ok {
		return fmt.Errorf("rating by unknown user %d", user)
	}
	if _, ok := ml.Movies[movie]; !ok {
		return fmt.Errorf("rating of unknown movie %d", movie)
	}
	ml.Ratings = append(ml.Ratings, Rating{User: user, Movie: movie, Score: float32(score), Time: t})
	return nil
}

// TitleWords splits a movie title into lower-cased words, as Paddle's
// movielens reader does for its title dictionary.
func TitleWords(title string) []string { return strings.Fields(strings.ToLower(title)) }

// TitleVocab numbers every title word of ml's movies by descending
// count, then word (Paddle numbers them in a Python set's varying order),
// with <unk> appended last for titles of movies added later.
func TitleVocab(ml *Set) (*data.Vocab, error) {
	if ml == nil {
		return nil, fmt.Errorf("movielens: TitleVocab of a nil MovieLens")
	}
	var counts data.Counter
	for _, m := range ml.Movies {
		counts.Add(TitleWords(m.Title)...)
	}
	return data.BuildVocab(&counts, data.VocabConfig{Unk: data.Unk})
}

// Dataset lays ml's ratings out as the Paddle book's recommender reads
// them, one example per rating in file order: "user", "gender" (0 male, 1
// female), "age" (age group), "job", "movie" (ids, int64 [N]), "genres" and
// "title" (ragged int64: genre ids, and title word ids in titles) and
// "score" (float32 [N], 1..5).
func (ml *Set) Dataset(titles *data.Vocab) (*data.Dataset, error) {
	if ml == nil || titles == nil {
		return nil, fmt.Errorf("movielens: Set.Dataset: nil MovieLens or title vocabulary")
	}
	n := len(ml.Ratings)
	user, gender, age, job, movie := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	genres, title := make([][]int64, n), make([][]int64, n)
	score := make([]float32, n)
	for i, r := range ml.Ratings {
		u, m := ml.Users[r.User], ml.Movies[r.Movie]
		user[i], age[i], job[i], movie[i], score[i] = int64(u.ID), int64(u.Group), int64(u.Job), int64(m.ID), r.Score
		if u.Female {
			gender[i] = 1
		}
		for _, g := range m.Genres {
			genres[i] = append(genres[i], int64(g))
		}
		ids, err := titles.Encode(TitleWords(m.Title))
		if err != nil {
			return nil, fmt.Errorf("movielens: Set.Dataset: movie %d: %w", m.ID, err)
		}
		title[i] = ids
	}
	return data.NewDataset(data.DenseField("user", tensor.MustFromSlice(user, len(user))), data.DenseField("gender", tensor.MustFromSlice(gender, len(gender))), data.DenseField("age", tensor.MustFromSlice(age, len(age))),
		data.DenseField("job", tensor.MustFromSlice(job, len(job))), data.DenseField("movie", tensor.MustFromSlice(movie, len(movie))), data.SeqField("genres", genres), data.SeqField("title", title),
		data.DenseField("score", tensor.MustFromSlice(score, len(score))))
}
